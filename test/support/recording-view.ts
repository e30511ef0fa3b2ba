/**
 * Views that write nothing and remember what they were told, in order, so that a flow's test can
 * say what the reader would have seen and when.
 */
import type { ClientEvent } from '../../src/api/connect/open-client.js';
import type { ApplyEvent } from '../../src/executor/events.js';
import type { ApplyView, RateGauge } from '../../src/commands/apply/view.js';
import type { PlanView } from '../../src/commands/plan/view.js';

export type Told = { said: string; args: unknown[] };

export interface RecordingApplyView extends ApplyView {
  told: Told[];
  /** What was said, in order (events by their type: `event:change-end`). */
  sayings(): string[];
  events(): ApplyEvent[];
  meter?: RateGauge;
}

export function recordingApplyView(): RecordingApplyView {
  const told: Told[] = [];
  const note = (said: string, ...args: unknown[]) => {
    told.push({ said, args });
  };
  const view: RecordingApplyView = {
    told,
    sayings: () => told.map((t) => (t.said === 'event' ? `event:${(t.args[0] as ApplyEvent).type}` : t.said)),
    events: () => told.filter((t) => t.said === 'event').map((t) => t.args[0] as ApplyEvent),
    configRejected: async (problems) => note('configRejected', problems),
    lockTakenOver: (statePath, pid) => note('lockTakenOver', statePath, pid),
    planMade: async (plan) => note('planMade', plan),
    planRefused: async (plan, hazard, desired) => note('planRefused', plan, hazard, desired),
    budgetChecked: (budget) => note('budgetChecked', budget),
    warn: (message) => note('warn', message),
    cancelled: () => note('cancelled'),
    applyStarting: (meter) => {
      view.meter = meter;
      note('applyStarting');
    },
    event: (event) => note('event', event),
    applyStopped: () => note('applyStopped'),
    applyReported: async (summary) => note('applyReported', summary),
  };
  return view;
}

export interface RecordingPlanView extends PlanView {
  told: Told[];
  /** What was said, in order (events by their type: `event:wait`). */
  sayings(): string[];
}

export function recordingPlanView(): RecordingPlanView {
  const told: Told[] = [];
  const note = (said: string, ...args: unknown[]) => {
    told.push({ said, args });
  };
  return {
    told,
    sayings: () => told.map((t) => (t.said === 'event' ? `event:${(t.args[0] as ClientEvent).type}` : t.said)),
    configRejected: async (problems) => note('configRejected', problems),
    planMade: async (plan, safety) => note('planMade', plan, safety),
    planSaved: (path) => note('planSaved', path),
    planChecked: async (plan, hazards, desired) => note('planChecked', plan, hazards, desired),
    event: (event) => note('event', event),
  };
}
