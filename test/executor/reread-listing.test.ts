import { describe, expect, it } from 'vitest';
import { chooseRereadMode, lowWaterMark, RereadListing, type Arrival } from '../../src/executor/reread-listing.js';
import { createScriptedClient, fail, gate, serviceError } from '../support/scripted-client.js';

const base = { parallelism: 16, rps: undefined, maxReadAgeMs: 5_000, maxPageSize: 500 };

describe('chooseRereadMode', () => {
  it('streams one listing when its pages cost fewer requests than reading each organisation by id', () => {
    expect(chooseRereadMode({ ...base, parallelism: 64, changes: 10_000, listed: 10_000 })).toEqual({ kind: 'listing', pageSize: 128 });
    // Two changes per worker, but never a page under 50.
    expect(chooseRereadMode({ ...base, changes: 10_000, listed: 10_000 })).toEqual({ kind: 'listing', pageSize: 50 });
  });

  it('reads by id when there are fewer changes than the listing would have pages, or no listing was read whole', () => {
    expect(chooseRereadMode({ ...base, changes: 150, listed: 100_000 })).toEqual({ kind: 'by-id' });
    expect(chooseRereadMode({ ...base, changes: 12, listed: undefined })).toEqual({ kind: 'by-id' });
    expect(chooseRereadMode({ ...base, changes: 0, listed: 10 })).toEqual({ kind: 'by-id' });
  });

  it('reads by id when every read must be made just before its write (a bound of 0)', () => {
    expect(chooseRereadMode({ ...base, changes: 10_000, listed: 10_000, maxReadAgeMs: 0 })).toEqual({ kind: 'by-id' });
  });

  it('asks for larger pages where few of the listed organisations change, up to the service’s largest', () => {
    expect(chooseRereadMode({ ...base, changes: 1_000, listed: 10_000 })).toEqual({ kind: 'listing', pageSize: 320 });
    expect(chooseRereadMode({ ...base, changes: 500, listed: 10_000 })).toEqual({ kind: 'listing', pageSize: 500 });
    expect(chooseRereadMode({ ...base, changes: 5_000, listed: 10_000 })).toEqual({ kind: 'listing', pageSize: 64 });
  });

  it('asks for smaller pages when a known request rate would make a page’s writes outlast a quarter of the bound, but never under 50', () => {
    // 80 a second for a quarter of 5 s: 100 writes a page.
    expect(chooseRereadMode({ ...base, parallelism: 64, rps: 80, changes: 10_000, listed: 10_000 })).toEqual({ kind: 'listing', pageSize: 100 });
    // 48 a second for a quarter of 10 s: 120.
    expect(chooseRereadMode({ ...base, parallelism: 64, rps: 48, maxReadAgeMs: 10_000, changes: 10_000, listed: 10_000 })).toEqual({ kind: 'listing', pageSize: 120 });
    expect(chooseRereadMode({ ...base, parallelism: 64, rps: 40, changes: 10_000, listed: 10_000 })).toEqual({ kind: 'listing', pageSize: 50 });
    expect(chooseRereadMode({ ...base, rps: 2, changes: 10_000, listed: 10_000 })).toEqual({ kind: 'listing', pageSize: 50 });
  });
});

describe('lowWaterMark', () => {
  it('keeps twice the parallelism waiting while nothing limits the rate', () => {
    expect(lowWaterMark(16, undefined)).toBe(32);
    expect(lowWaterMark(16, 1_000)).toBe(32);
  });

  it('keeps no more than half a second of writes waiting at a known rate, and at least one', () => {
    expect(lowWaterMark(16, 12)).toBe(6);
    expect(lowWaterMark(16, 49)).toBe(25);
    expect(lowWaterMark(16, 0.5)).toBe(1);
  });

  it('adds the writes of the time the fastest page took to come, for a service slow to answer one', () => {
    // 12 a second, pages in 20 ms: 12 × 0.52 s.
    expect(lowWaterMark(16, 12, 20)).toBe(7);
    // 30 a second, pages in a second: 45 (half a second alone left the workers idle at every page).
    expect(lowWaterMark(32, 30, 1_000)).toBe(45);
    expect(lowWaterMark(16, 30, 1_000)).toBe(32);
  });

  it('leaves fewer waiting when the pages bring many, so that those and the page’s own are written within half the send window', () => {
    // 12 a second, 5 s: 30 writes in half the window; pages of 100 bringing 25 leave room for 5.
    expect(lowWaterMark(16, 12, 20, 25, 5_000)).toBe(5);
    // At 10 a second a page of 25 fills half the window alone: read only once the last one is taken.
    expect(lowWaterMark(16, 10, 20, 25, 5_000)).toBe(1);
    // Pages bringing a dozen leave the half second's mark as it was; a longer bound leaves more room.
    expect(lowWaterMark(16, 12, 20, 12, 5_000)).toBe(7);
    expect(lowWaterMark(16, 12, 20, 25, 10_000)).toBe(7);
    // Nothing limits the rate: the page's size does not matter.
    expect(lowWaterMark(16, undefined, 20, 100, 5_000)).toBe(32);
  });
});

const member = (slug: string, billing: Record<string, string> = {}) => ({ id: `org_${slug}`, slug, member: true, billing });

/** A client whose listing answers pages of two, and the listing over it waiting for the groups of `ids`, in order. */
function setup(ids: string[], options: { lowWater?: number | ((pageMs?: number, pageYield?: number) => number); now?: () => number } = {}) {
  const now = options.now ?? (() => 7);
  const client = createScriptedClient(['a', 'b', 'c', 'd', 'e'].map((s) => member(s, { billingEmail: `${s}@x.test` })), { active: 'org_a', pageSize: 2, now });
  const listing = new RereadListing(new Map(ids.map((id, group) => [id, group])), { client, pageSize: 2, maxReadAgeMs: 5_000, lowWater: typeof options.lowWater === 'function' ? options.lowWater : () => (options.lowWater as number | undefined) ?? 1, now });
  return { client, listing };
}

function drain(listing: RereadListing): Arrival[] {
  const out: Arrival[] = [];
  for (let a = listing.take(); a !== undefined; a = listing.take()) out.push(a);
  return out;
}

describe('RereadListing', () => {
  it('holds no group it has handed over, though the next page comes while groups still wait: an apply of 100,000 held every observation to its end', async () => {
    const orgs = Array.from({ length: 3_000 }, (_, i) => member(`o${String(i).padStart(4, '0')}`, { billingEmail: `${i}@x.test` }));
    const client = createScriptedClient(orgs, { active: orgs[0]!.id, pageSize: 50 });
    const listing = new RereadListing(new Map(orgs.map((o, group) => [o.id, group])), { client, pageSize: 50, maxReadAgeMs: 5_000, lowWater: () => 10, now: () => 7 });
    const held = (): Array<Arrival | undefined> => (listing as unknown as { queue: Array<Arrival | undefined> }).queue;
    const taken: Arrival[] = [];
    let largest = 0;
    for (;;) {
      if (listing.wantsRead()) await listing.readPage();
      const arrival = listing.take();
      if (arrival === undefined) break;
      taken.push(arrival);
      largest = Math.max(largest, held().length);
    }
    expect(taken.map((a) => a.group)).toEqual(orgs.map((_, group) => group));
    expect(taken.filter((a) => held().includes(a))).toEqual([]);
    // Never more than the places taken since it was last cut down (1,024), and a page.
    expect(largest).toBeLessThanOrEqual(2 * 1_024 + 50);
  });

  it('hands over each waiting organisation on a page with its slug, its billing as listed and when the page was asked for', async () => {
    let clock = 7;
    const { listing } = setup(['org_d', 'org_b'], { now: () => clock });
    expect(listing.wantsRead()).toBe(true);
    await listing.readPage();
    expect(drain(listing)).toEqual([{ group: 1, reread: { kind: 'listed', slug: 'b', billing: { billingEmail: 'b@x.test', customerID: null, subscriptionID: null, platformID: null }, readAt: 7 } }]);
    clock = 9;
    await listing.readPage();
    expect(drain(listing)).toEqual([{ group: 0, reread: { kind: 'listed', slug: 'd', billing: { billingEmail: 'd@x.test', customerID: null, subscriptionID: null, platformID: null }, readAt: 9 } }]);
    // Every organisation found: the last page is not read.
    expect(listing.wantsRead()).toBe(false);
  });

  it('counts a page as read when it was asked for, however long its answer took: what was renewed meanwhile it does not show', async () => {
    let clock = 7;
    const { client, listing } = setup(['org_b'], { now: () => clock });
    const held = gate();
    client.on('getOrganisations', held.script);
    const reading = listing.readPage();
    await held.held;
    clock = 6_007;
    held.release();
    await reading;
    expect(drain(listing)).toMatchObject([{ group: 0, reread: { kind: 'listed', slug: 'b', readAt: 7 } }]);
  });

  it('reads a page only while fewer groups than the low water wait to run, and one page at a time', async () => {
    const { client, listing } = setup(['org_a', 'org_b', 'org_c', 'org_e'], { lowWater: 2 });
    const held = gate();
    client.on('getOrganisations', held.script);
    const reading = listing.readPage();
    await held.held;
    expect(listing.busy).toBe(true);
    expect(listing.wantsRead()).toBe(false);
    held.release();
    await reading;
    expect(listing.busy).toBe(false);
    // a and b read: two waiting is not below the low water of 2.
    expect(listing.wantsRead()).toBe(false);
    expect(listing.take()?.group).toBe(0);
    expect(listing.wantsRead()).toBe(true);
    await listing.readPage();
    expect(drain(listing).map((a) => a.group)).toEqual([1, 2]);
  });

  it('asks for the low water each time, so that the pages follow the rate as it changes', async () => {
    let lowWater = 3;
    const { listing } = setup(['org_a', 'org_b', 'org_c', 'org_d'], { lowWater: () => lowWater });
    await listing.readPage();
    // a and b wait: below 3, so the next page is wanted…
    expect(listing.wantsRead()).toBe(true);
    // …until the rate drops and the mark with it.
    lowWater = 2;
    expect(listing.wantsRead()).toBe(false);
    lowWater = 1;
    listing.take();
    expect(listing.wantsRead()).toBe(false);
    listing.take();
    expect(listing.wantsRead()).toBe(true);
  });

  it('tells the low water the fastest a page has come so far, nothing before the first', async () => {
    let clock = 0;
    const seen: Array<number | undefined> = [];
    const { client, listing } = setup(['org_a', 'org_c', 'org_e'], {
      lowWater: (pageMs?: number) => {
        seen.push(pageMs);
        return 10;
      },
      now: () => clock,
    });
    const held = gate();
    client.on('getOrganisations', held.script);
    expect(listing.wantsRead()).toBe(true);
    const first = listing.readPage();
    await held.held;
    clock = 300;
    held.release();
    await first;
    expect(listing.wantsRead()).toBe(true);
    // The next page comes at once: the fastest is now 0 ms.
    await listing.readPage();
    expect(listing.wantsRead()).toBe(true);
    // Asked by each wantsRead, readPage's own included.
    expect(seen).toEqual([undefined, undefined, 300, 300, 0]);
  });

  it('tells the low water the most groups one of the last pages brought, learned from the pages, nothing before the first', async () => {
    const seen: Array<number | undefined> = [];
    // Pages of two: a and b (2 waiting), c and d (1), e (1).
    const { listing } = setup(['org_a', 'org_b', 'org_c', 'org_e'], {
      lowWater: (_pageMs?: number, pageYield?: number) => {
        seen.push(pageYield);
        return 10;
      },
    });
    await listing.readPage();
    await listing.readPage();
    drain(listing);
    expect(listing.wantsRead()).toBe(true);
    // Asked before each read and once more: nothing known before the first page; 2 after it; after
    // the second (which brought 1), still the most of the last pages, 2.
    expect(seen).toEqual([undefined, 2, 2]);
  });

  describe('a group whose read ages before its turn', () => {
    /** The listing over a client whose pages can be read again (as the real client's can), counting how often. */
    function ageing(ids: string[]) {
      let clock = 0;
      const { client } = setup([], { now: () => clock });
      const again: number[] = [];
      const pages = async function* (options?: { pageSize?: number }) {
        let number = 0;
        for await (const page of client.listOrganisationPages(options)) {
          const at = number++;
          yield { ...page, again: async () => {
            again.push(at);
            const fresh = [];
            for await (const p of client.listOrganisationPages(options)) fresh.push(p);
            return { ...fresh[at]!, sentAt: clock };
          } };
        }
      };
      const listing = new RereadListing(new Map(ids.map((id, group) => [id, group])), { client: { ...client, listOrganisationPages: pages }, pageSize: 2, maxReadAgeMs: 4_000, lowWater: () => 1, now: () => clock });
      return { listing, again, setClock: (t: number) => (clock = t), client };
    }

    it('with less than a quarter of the bound left, is read again with its page: one request for the page’s groups, not a read by id each', async () => {
      const { listing, again, setClock } = ageing(['org_a', 'org_b']);
      await listing.readPage();
      setClock(3_001);
      // Both on page 1, read at 0, 3,001 ms old of 4,000: set aside, and the page is wanted again.
      expect(listing.take()).toBeUndefined();
      expect(listing.wantsRead()).toBe(true);
      await listing.readPage();
      expect(again).toEqual([0]);
      expect(drain(listing)).toMatchObject([
        { group: 0, reread: { kind: 'listed', slug: 'a', readAt: 3_001 } },
        { group: 1, reread: { kind: 'listed', slug: 'b', readAt: 3_001 } },
      ]);
    });

    it('with a quarter of the bound left or more, is handed over as read', async () => {
      const { listing, again, setClock } = ageing(['org_a', 'org_b']);
      await listing.readPage();
      setClock(3_000);
      expect(drain(listing).map((a) => a.reread)).toMatchObject([{ readAt: 0 }, { readAt: 0 }]);
      expect(again).toEqual([]);
    });

    it('alone on its page, is read by id just before its write (never written from the read it was set aside for); read again once already, goes as read then', async () => {
      const { listing, again, setClock } = ageing(['org_a', 'org_b', 'org_c']);
      await listing.readPage();
      setClock(3_500);
      expect(listing.take()).toBeUndefined();
      await listing.readPage();
      expect(again).toEqual([0]);
      // Read again at 3,500: aged once more, they are not read a third time.
      setClock(7_000);
      expect(drain(listing).map((a) => a.reread)).toMatchObject([{ readAt: 3_500 }, { readAt: 3_500 }]);
      // c, alone on page 2: the page would cost as much as its read by id.
      await listing.readPage();
      setClock(11_000);
      expect(listing.take()).toBeUndefined();
      await listing.readPage();
      expect(again).toEqual([0]);
      expect(drain(listing)).toMatchObject([{ group: 2, reread: { kind: 'listed', slug: 'c', billing: null, readAt: 7_000 } }]);
    });

    it('is not read again with its page when pages take a quarter of the bound or more to come: that read would be as old', async () => {
      const { listing, again, setClock, client } = ageing(['org_a', 'org_b']);
      const held = gate();
      client.on('getOrganisations', held.script);
      const reading = listing.readPage();
      await held.held;
      setClock(1_000);
      held.release();
      await reading;
      setClock(3_500);
      expect(drain(listing).map((a) => a.reread)).toMatchObject([{ readAt: 0 }, { readAt: 0 }]);
      expect(again).toEqual([]);
    });

    it('takes nothing from a page read again that shows an organisation twice (which billing would it be?): the group is read by id, as the listing refuses such a page', async () => {
      let clock = 0;
      const org = (slug: string, billingEmail: string) => ({ id: `org_${slug}`, slug, billing: { billingEmail } });
      // The page read again lists a twice: renewed, then as it was.
      const again = async () => ({ organisations: [org('a', 'renewed@x.test'), org('b', 'b@x.test'), org('a', 'a@x.test')], sentAt: clock });
      const pages = async function* () {
        yield { organisations: [org('a', 'a@x.test'), org('b', 'b@x.test')], sentAt: clock, again };
      };
      const { client } = setup([]);
      const listing = new RereadListing(new Map([['org_a', 0], ['org_b', 1]]), { client: { ...client, listOrganisationPages: pages }, pageSize: 2, maxReadAgeMs: 4_000, lowWater: () => 1, now: () => clock });
      await listing.readPage();
      clock = 3_500;
      expect(listing.take()).toBeUndefined();
      await listing.readPage();
      expect(drain(listing)).toMatchObject([
        { group: 0, reread: { kind: 'listed', slug: 'a', billing: null, readAt: 0 } },
        { group: 1, reread: { kind: 'listed', slug: 'b', billing: { billingEmail: 'b@x.test' }, readAt: 3_500 } },
      ]);
    });

    it('when its page read again fails, or no longer shows it, is read by id: never written from the read it was set aside for', async () => {
      const { listing, setClock, client } = ageing(['org_a', 'org_b', 'org_c', 'org_d']);
      await listing.readPage();
      setClock(3_500);
      expect(listing.take()).toBeUndefined();
      // Page 1 read again fails (an expired cursor).
      client.on('getOrganisations', async () => {
        throw serviceError('getOrganisations', 410, 'cursor_expired');
      });
      await listing.readPage();
      expect(drain(listing)).toMatchObject([
        { group: 0, reread: { kind: 'listed', slug: 'a', billing: null, readAt: 0 } },
        { group: 1, reread: { kind: 'listed', slug: 'b', billing: null, readAt: 0 } },
      ]);
      // Page 2 read again no longer shows d: someone took it out of your organisations meanwhile.
      await listing.readPage();
      client.organisation('org_d')!.member = false;
      setClock(7_000);
      expect(listing.take()).toBeUndefined();
      await listing.readPage();
      expect(drain(listing)).toMatchObject([
        { group: 2, reread: { kind: 'listed', slug: 'c', billing: { billingEmail: 'c@x.test' }, readAt: 7_000 } },
        { group: 3, reread: { kind: 'listed', slug: 'd', billing: null, readAt: 3_500 } },
      ]);
    });

    it('once closed (an interrupt), what was set aside is handed over without a read, and does not start', async () => {
      const { listing, setClock } = ageing(['org_a', 'org_b', 'org_e']);
      await listing.readPage();
      setClock(3_500);
      expect(listing.take()).toBeUndefined();
      listing.close();
      expect(drain(listing)).toEqual([
        { group: 2, reread: undefined },
        { group: 0, reread: undefined },
        { group: 1, reread: undefined },
      ]);
      expect(listing.wantsRead()).toBe(false);
    });
  });

  it('hands over what the listing never showed as unlisted once it has ended', async () => {
    const { listing } = setup(['org_c', 'org_gone']);
    const arrived: Arrival[] = [];
    while (listing.wantsRead()) {
      await listing.readPage();
      arrived.push(...drain(listing));
    }
    expect(arrived.map((a) => [a.group, a.reread?.kind])).toEqual([
      [0, 'listed'],
      [1, 'unlisted'],
    ]);
  });

  it('hands over everything not read yet as unreadable, with the error, when a page fails', async () => {
    const { client, listing } = setup(['org_a', 'org_b']);
    const error = serviceError('getOrganisations', 500, 'internal');
    client.on('getOrganisations', fail(error));
    await listing.readPage();
    expect(drain(listing)).toEqual([
      { group: 0, reread: { kind: 'unreadable', error } },
      { group: 1, reread: { kind: 'unreadable', error } },
    ]);
    expect(listing.wantsRead()).toBe(false);
  });

  it('once closed (an interrupt) reads nothing more and hands over what waits without a read, after the page on its way', async () => {
    const { client, listing } = setup(['org_b', 'org_gone']);
    const held = gate();
    client.on('getOrganisations', held.script);
    const reading = listing.readPage();
    await held.held;
    listing.close();
    held.release();
    await reading;
    expect(drain(listing).map((a) => [a.group, a.reread?.kind])).toEqual([
      [0, 'listed'],
      [1, undefined],
    ]);
    expect(listing.wantsRead()).toBe(false);
    expect(client.calls.filter((c) => c.operation === 'getOrganisations')).toHaveLength(1);
  });

  it('closed before any read, hands everything over at once without reading', () => {
    const { client, listing } = setup(['org_a']);
    listing.close();
    expect(drain(listing)).toEqual([{ group: 0, reread: undefined }]);
    expect(client.calls).toEqual([]);
  });
});
