/**
 * The single reads of the plan, at most `parallelism` at once: the billing of a listed member that
 * the listing does not show, and the organisations declared by id that no whole listing answered
 * (typically an invitation still to accept). Readable is not member: membership only ever comes
 * from a listing (the whole one, or one filtered by the declared slug).
 */
import pLimit, { type LimitFunction } from 'p-limit';
import { isForbidden, isNotFound } from '../../api/api-error.js';
import type { OrganisationsClient } from '../../api/client.js';
import { observeBilling } from '../../api/observe-billing.js';
import type { Organisation } from '../../api/types.js';
import type { DesiredOrganisation } from '../../model/desired-state.js';
import { errorText, observe, type Observation } from './observation.js';
import type { Listed } from './read-whole-listing.js';

export class ReadsById {
  private readonly limit: LimitFunction;
  private readonly reads: Array<Promise<void>> = [];

  constructor(
    private readonly client: OrganisationsClient,
    private readonly observation: Observation,
    parallelism: number,
  ) {
    this.limit = pLimit(parallelism);
  }

  /** A member found in a listing; billing the listing cannot show (`unknown` says why) is read by id when it is declared. */
  member(d: DesiredOrganisation, { listed, unknown }: Listed): void {
    if (listed.billing !== null || d.billing === undefined) {
      this.observation.record(d, listed);
      return;
    }
    this.reads.push(this.limit(() => this.billingById(d, listed.id, unknown)));
  }

  /**
   * An organisation declared by id that no whole listing showed. `filtered`: no whole listing was
   * read, so the listing filtered by the declared slug says first whether you are a member.
   */
  declared(d: DesiredOrganisation, id: string, filtered: boolean): void {
    this.reads.push(this.limit(() => this.readDeclared(d, id, filtered)));
  }

  /** Resolves once every read asked for has ended. */
  async done(): Promise<void> {
    await Promise.all(this.reads);
  }

  private async billingById(d: DesiredOrganisation, id: string, unknown: string | undefined): Promise<void> {
    try {
      this.recordById(d, await this.client.getOrganisation(id));
    } catch (err) {
      this.observation.problem(d, `the billing of organisation "${d.slug}" could not be read (${unknown}, and reading it by id failed: ${errorText(err)}); nothing will be written for it. Run plan again.`);
    }
  }

  private async readDeclared(d: DesiredOrganisation, id: string, filtered: boolean): Promise<void> {
    if (filtered && (await this.readListedBySlug(d, id))) return;
    try {
      // Readable is not member: the listing does not hold it.
      this.recordNonMember(d, await this.client.getOrganisation(id));
    } catch (err) {
      if ((isNotFound(err) || isForbidden(err)) && d.invitations.accept.length > 0) {
        // Not readable yet: the user joins by accepting. Billing is unknown until then.
        this.observation.record(d, { slug: d.slug, id, member: false, billing: null });
      } else if (isNotFound(err)) {
        this.observation.problem(d, `organisation id "${id}" was not found, or you are not a member of it. Check the id; to join it, declare the invitation under invitations.accept.`);
      } else {
        this.observation.problem(d, errorText(err));
      }
    }
  }

  /**
   * Looks for organisation `id` in the listing filtered by `d`'s slug (one small listing): recorded
   * as a member when there, its billing read by id if the listing does not show it. False when the
   * listing does not hold it (not a member, or another slug): the caller reads it by id to say which.
   */
  private async readListedBySlug(d: DesiredOrganisation, id: string): Promise<boolean> {
    let found: Organisation | undefined;
    try {
      for await (const org of this.client.listOrganisations({ filter: d.slug })) {
        if (org.id === id) {
          found = org;
          break;
        }
      }
    } catch (err) {
      this.observation.problem(d, errorText(err));
      return true;
    }
    if (found === undefined) return false;
    if (found.slug !== d.slug) {
      this.observation.slugMismatch(d, found);
      return true;
    }
    const billing = observeBilling(found.billing, false);
    if (billing.known || d.billing === undefined) this.observation.record(d, observe(found, d.slug, true, billing));
    else await this.billingById(d, id, billing.reason);
    return true;
  }

  /** A by-id read of an organisation a listing shows you a member of: authoritative for billing; billing that still cannot be read is a problem when declared. */
  private recordById(d: DesiredOrganisation, org: Organisation): void {
    this.observation.slugsById.set(org.id, org.slug);
    if (org.slug !== d.slug) return this.observation.slugMismatch(d, org);
    const billing = observeBilling(org.billing, true);
    if (!billing.known && d.billing !== undefined) {
      this.observation.problem(d, `the billing of organisation "${d.slug}" cannot be read (${billing.reason}); orgform will not send a billing update that could clear values it did not see. Nothing will be written for this organisation.`);
      return;
    }
    this.observation.record(d, observe(org, d.slug, true, billing));
  }

  /** Readable, but not in the listing of memberships: only an invitation to accept makes it writable. */
  private recordNonMember(d: DesiredOrganisation, org: Organisation): void {
    this.observation.slugsById.set(org.id, org.slug);
    // Another slug first: a listing filtered by the declared slug cannot have found it.
    if (org.slug !== d.slug) return this.observation.slugMismatch(d, org);
    if (d.invitations.accept.length === 0) {
      this.observation.problem(d, `you are not a member of organisation id "${org.id}" (it is not among your organisations, though the service lets you read it). To join it, declare the invitation under invitations.accept.`);
      return;
    }
    // Its billing is read again after the accept: what a non-member sees proves nothing about what a member writes over.
    this.observation.record(d, { slug: d.slug, id: org.id, member: false, billing: null });
  }
}
