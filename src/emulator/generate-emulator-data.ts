/**
 * Synthetic seed data for benchmarks and scale tests: n organisations with complete billing
 * objects, all owned by and shared with one demo user. Seeded, so two runs produce the same data.
 */
import type { Billing, Organisation } from '../api/types.js';
import type { EmulatorData } from './data.js';

export interface GenerateEmulatorDataOptions {
  organisations: number;
  seed?: number;
  /** Token of the one user, member of every organisation; default `demo-token`. */
  token?: string;
}

const PLANS = ['free', 'team', 'business', 'enterprise'] as const;
const WORDS = ['amber', 'birch', 'cobalt', 'delta', 'ember', 'fjord', 'granite', 'harbor', 'indigo', 'juniper'];

export function generateEmulatorData(options: GenerateEmulatorDataOptions): EmulatorData {
  const count = Math.max(0, Math.floor(options.organisations));
  const random = createSeededRandom(options.seed ?? 1);
  const width = Math.max(5, String(count).length);
  const organisations: Organisation[] = [];
  const channels: EmulatorData['channels'] = [];
  for (let i = 1; i <= count; i += 1) {
    const n = String(i).padStart(width, '0');
    const word = WORDS[Math.floor(random() * WORDS.length)] ?? 'plain';
    organisations.push({
      id: `org_${n}`,
      slug: `org-${n}`,
      displayName: `${capitalise(word)} Organisation ${n}`,
      owner: 'ada@acme.example',
      billing: createBilling(n, random),
      systemServiceAccountClientID: `ssa-${n}`,
      plan: PLANS[Math.floor(random() * PLANS.length)] ?? 'free',
    });
    channels.push({ id: `chn_${n}`, organisationId: `org_${n}` });
  }
  const first = organisations[0];
  return {
    users: [
      {
        token: options.token ?? 'demo-token',
        email: 'ada@acme.example',
        memberships: organisations.map((o) => o.id),
        ...(first ? { active: first.id } : {}),
      },
    ],
    organisations,
    invitations: [],
    channels,
  };
}

function createBilling(n: string, random: () => number): Billing {
  const active = random() < 0.8;
  return {
    platformId: `plat_${n}`,
    customerId: `cus_${n}`,
    billingEmail: `billing+${n}@example.com`,
    isSubscriptionActive: active ? 1 : 0,
    billingPeriodStart: '2025-01-01',
    billingPeriodEnd: '2025-12-31',
    platformType: 'stripe',
    subscriptionId: `sub_${n}`,
    recentSubscriptions: [{ id: `sub_${n}`, status: active ? 'active' : 'canceled', rawData: { seats: 1 + Math.floor(random() * 50) } }],
    hasMoreSubscriptions: false,
    freeTrialEndDate: '2024-12-31',
    isBespoke: random() < 0.05,
    boardQuota: 10 + Math.floor(random() * 90),
    hubBoardQuota: 5,
  };
}

/** mulberry32: tiny, fast and good enough to make test data and fault shares repeatable. */
export function createSeededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function capitalise(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}
