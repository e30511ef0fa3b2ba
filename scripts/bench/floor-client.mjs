// The floor: the plainest Node client that sends the requests orgform's plan or apply sends, with
// undici.request and nothing else (no retries, journal, views or checks). Run as its own process by
// the bench, under the same probe: what orgform costs above this is orgform's own.
//   node floor-client.mjs plan  BASE_URL TOKEN PAGE_SIZE
//   node floor-client.mjs apply BASE_URL TOKEN PAGE_SIZE PARALLELISM FRESH_PAGE_SIZE EMAIL_PREFIX
// apply: the plan's listing page after page, then PARALLELISM workers that read the listing again
// (FRESH_PAGE_SIZE a page, the next page once fewer than 2 × PARALLELISM organisations wait, one
// place held per page, until every organisation is found, as orgform does) and PUT each organisation's billing with a new e-mail.
import { randomUUID } from 'node:crypto';
import { channel } from 'node:diagnostics_channel';
import { request } from 'undici';

const [kind, baseUrl, token, pageSize, parallelism, freshPageSize, prefix] = process.argv.slice(2);
const base = baseUrl.replace(/\/+$/, '');
const auth = { authorization: `Bearer ${token}`, accept: 'application/json' };

// The steps of each page, on the channel orgform's listing publishes (the bench's --timeline): its
// cursor is known once the page is parsed, and it has no checks.
const timeline = channel('orgform:listing-page');
const mark = (page, ...steps) => {
  if (timeline.hasSubscribers) for (const step of steps) timeline.publish({ page, step });
};

async function* pages(size) {
  const first = `${base}/api/organisations/v1/organisations?limit=${size}`;
  let url = first;
  for (let number = 1; ; number += 1) {
    const { statusCode, body } = await request(url, { headers: auth });
    const page = await body.json();
    if (statusCode !== 200) throw new Error(`listing answered ${statusCode}`);
    mark(number, 'read', 'next', 'checked');
    yield page.organisations;
    mark(number, 'used');
    if (page.organisations.length === 0 || !page.next) return;
    url = `${first}&cursor=${encodeURIComponent(page.next)}`;
  }
}

let listed = 0;
for await (const orgs of pages(pageSize)) listed += orgs.length;
if (kind === 'apply') {
  const listing = pages(freshPageSize)[Symbol.asyncIterator]();
  const ready = [];
  let reading = null;
  let ended = false;
  const put = async (org) => {
    const billing = { billingEmail: `${prefix}+${org.slug}@example.com`, customerID: org.billing.customerId, subscriptionID: org.billing.subscriptionId, platformID: org.billing.platformId };
    const headers = { ...auth, 'content-type': 'application/json', 'idempotency-key': randomUUID() };
    const { statusCode, body } = await request(`${base}/api/organisations/v1/organisations/${encodeURIComponent(org.id)}/billing`, { method: 'PUT', headers, body: JSON.stringify(billing) });
    await body.text();
    if (statusCode >= 300) throw new Error(`billing of ${org.id} answered ${statusCode}`);
  };
  const worker = async () => {
    for (;;) {
      if (!ended && reading === null && ready.length < 2 * Number(parallelism)) {
        reading = listing.next().then((r) => {
          if (!r.done) ready.push(...r.value);
          // As orgform's, the listing read again ends once every organisation is found.
          listed -= r.done ? 0 : r.value.length;
          ended = r.done || listed <= 0;
          reading = null;
        });
        await reading;
      } else if (ready.length > 0) await put(ready.shift());
      else if (reading !== null) await reading;
      else if (ended) return;
    }
  };
  await Promise.all(Array.from({ length: Number(parallelism) }, worker));
}
