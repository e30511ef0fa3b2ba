/**
 * How a flow gets its client: clientOpener (open-client.ts) opens it from the connection and client
 * settings (the service, the token or its command, the request budget); the flow calls it at its
 * Connect step and listens. Types only: the flow's side of that contract, so tests open a scripted
 * client instead.
 */
import type { OrganisationsClient } from '../client.js';
import type { RetryEvent } from '../../transport/transport.js';
import type { JwtExpiry } from '../read-jwt-expiry.js';
import type { RateEvent } from '../rate/rate-gate.js';
import type { WaitEvent } from '../wait-event.js';
import type { OrgformError } from '../../errors.js';

export type { RetryEvent } from '../../transport/transport.js';

/** What the client tells the flow while it works. */
export interface ClientListeners {
  /** A request is retried (labelled with the change's address when a change sent it). */
  onRetry?(event: RetryEvent): void;
  /** The shared rate changed for a reason worth showing, or gave up. */
  onRate?(event: RateEvent): void;
  /** The run cannot go on: only 429s for too long, or the token command failed part way. */
  onHalt?(error: OrgformError): void;
  /** The run has waited WAIT_NOTICE_MS for something (the service, its rate limit, the token command): what, and until when. */
  onWait?(event: WaitEvent): void;
}

export interface OpenedClient {
  client: OrganisationsClient;
  /** When the token is a fixed JWT: its expiry (never the token itself), for apply's warning that it runs out part way. */
  tokenExpiry?: JwtExpiry;
}

export type OpenClient = (listeners: ClientListeners) => Promise<OpenedClient>;
