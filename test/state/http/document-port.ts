/**
 * The Terraform HTTP protocol's four requests (a DocumentPort), sent with fetch to the test backend
 * (test/support/terraform-http-backend.mjs), as GitLab takes them: for the DocumentWriter's tests,
 * apart from any transport.
 */
import type { LockHolder } from '../../../src/state/state-backend.js';
import { emptyDocument, parseStateDocument, serializeStateDocument, type StateDocument } from '../../../src/state/terraform-document.js';
import type { DocumentPort } from '../../../src/state/http/document-writer.js';

const AUTHORIZATION = `Basic ${Buffer.from('gitlab-ci-token:job-token-123').toString('base64')}`;

export function fetchPort(address: string): DocumentPort & { requests: string[] } {
  const requests: string[] = [];
  const send = async (method: string, url: string, body?: string) => {
    requests.push(`${method} ${new URL(url).pathname}`);
    const answer = await fetch(url, { method, headers: { authorization: AUTHORIZATION, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body }) });
    return { status: answer.status, text: await answer.text() };
  };
  return {
    requests,
    async read(): Promise<StateDocument> {
      const answer = await send('GET', address);
      return answer.status === 404 || answer.status === 204 ? emptyDocument() : parseStateDocument(answer.text, address);
    },
    async lock(holder: LockHolder, what: string) {
      const info = { ID: holder.id, Operation: what, Info: '', Who: holder.who ?? '', Version: 'test', Created: holder.startedAt ?? '', Path: '' };
      const answer = await send('POST', `${address}/lock`, JSON.stringify(info));
      if (answer.status === 200) return undefined;
      const other = JSON.parse(answer.text || '{}') as { ID?: string; Who?: string };
      return { id: other.ID ?? '(not given)', ...(other.Who === undefined ? {} : { who: other.Who }) };
    },
    async unlock(id: string) {
      return (await send('DELETE', `${address}/lock`, JSON.stringify({ ID: id }))).status === 200;
    },
    async post(doc: StateDocument, id: string) {
      const answer = await send('POST', `${address}?ID=${id}`, serializeStateDocument(doc, 'test'));
      if (answer.status !== 200) throw new Error(`HTTP ${answer.status} ${answer.text}`);
    },
  };
}
