/**
 * How an engine gets its client: the CLI opens it (connection flags, the token and its command,
 * the request budget from the environment) and the engine listens. Types only: the engine's side of
 * that contract.
 */
import type { OrganisationsClient } from '../client.js';
import type { RetryEvent } from '../dispatcher.js';
import type { RateEvent } from '../rate/rate-gate.js';
import type { OrgformError } from '../../errors.js';

/** What the client tells the engine while it works. */
export interface ClientListeners {
  /** A request is retried (labelled with the change's address when a change sent it). */
  onRetry?(event: RetryEvent): void;
  /** The shared rate changed for a reason worth showing, or gave up. */
  onRate?(event: RateEvent): void;
  /** The run cannot go on: only 429s for too long, or the token command failed part way. */
  onHalt?(error: OrgformError): void;
}

export interface OpenedClient {
  client: OrganisationsClient;
  /** Something to know before writing this many changes (a token that expires part way), if anything. */
  warningFor?(changes: number): string | undefined;
}

export type OpenClient = (listeners: ClientListeners) => Promise<OpenedClient>;
