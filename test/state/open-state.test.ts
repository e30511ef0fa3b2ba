import { describe, expect, it } from 'vitest';
import { readStateSettings } from '../../src/cli/settings.js';
import { openState, stateSpecFor } from '../../src/state/open-state.js';

const base = { defaultPath: '/repo/.orgform/state.json', cwd: '/repo' };

describe('where the state is', () => {
  it('is --state if given, else ORGFORM_STATE, else the default file', () => {
    const settings = readStateSettings({ ORGFORM_STATE: 'postgres://db/ops?state=prod' });
    expect(stateSpecFor({ ...base, state: 'mine.json', settings })).toMatchObject({ kind: 'file', path: '/repo/mine.json' });
    expect(stateSpecFor({ ...base, settings })).toMatchObject({ kind: 'postgres', name: 'prod' });
    expect(stateSpecFor({ ...base, settings: readStateSettings({ ORGFORM_STATE: '' }) })).toMatchObject({ kind: 'file', path: '/repo/.orgform/state.json' });
    expect(stateSpecFor({ ...base, settings: readStateSettings({}) })).toMatchObject({ kind: 'file', path: '/repo/.orgform/state.json' });
  });

  it('opens each kind behind the one interface, naming where it is', async () => {
    expect(await openState({ ...base })).toMatchObject({ kind: 'file', location: '/repo/.orgform/state.json' });
    expect(await openState({ ...base, state: 'postgres://ada:pw@db/ops' })).toMatchObject({ kind: 'postgres', location: 'postgres://[REDACTED]@db/ops?state=default' });
    expect(await openState({ ...base, state: 'https://gitlab.example/api/v4/projects/1/terraform/state/o' })).toMatchObject({ kind: 'http' });
  });
});
