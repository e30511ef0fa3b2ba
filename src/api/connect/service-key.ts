import type { OrganisationsClient } from '../client.js';

/** The service as plans and the journal name it: the base URL as the client normalised it. */
export function serviceKeyOf(client: Pick<OrganisationsClient, 'baseUrl'>): string {
  return client.baseUrl.toString().replace(/\/$/, '');
}
