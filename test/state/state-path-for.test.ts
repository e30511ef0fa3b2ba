import { describe, expect, it } from 'vitest';
import { statePathFor } from '../../src/state/state-path-for.js';
import { desiredState } from '../support/plan-fixtures.js';

describe('statePathFor', () => {
  it('puts the journal beside the first config file, or in the working directory without one', () => {
    const desired = desiredState({ files: [{ path: 'teams/a.yaml', sha256: 'x' }, { path: 'b.yaml', sha256: 'y' }] });
    expect(statePathFor(desired, '/repo')).toBe('/repo/teams/.orgform/state.json');
    expect(statePathFor(undefined, '/repo')).toBe('/repo/.orgform/state.json');
  });
});
