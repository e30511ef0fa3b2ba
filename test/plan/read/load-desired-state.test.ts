import { describe, expect, it } from 'vitest';
import { loadDesiredState } from '../../../src/plan/read/load-desired-state.js';
import { ConfigError, UsageError } from '../../../src/errors.js';
import { makeWorkspace } from '../../support/workspace.js';

const TWO = 'version: 1\norganisations:\n  acme: {}\n  globex:\n    billing:\n      billingEmail: ${ORGFORM_VAR_EMAIL}\n';

describe('loadDesiredState', () => {
  it('reads ./orgs.yaml when no file is named, with ${NAME} from the environment given', async () => {
    const cwd = await makeWorkspace({ 'orgs.yaml': TWO });
    const { desired, selected } = await loadDesiredState({ files: [] }, { cwd, configVariables: { ORGFORM_VAR_EMAIL: 'a@b.test' } });
    expect(desired.organisations.map((o) => o.slug)).toEqual(['acme', 'globex']);
    expect(selected.organisations[1]?.billing).toEqual({ billingEmail: 'a@b.test' });
  });

  it('narrows the selection by --target, keeping the whole desired state beside it', async () => {
    const cwd = await makeWorkspace({ 'team.yaml': TWO });
    const { desired, selected } = await loadDesiredState({ files: ['team.yaml'], targets: ['globex'] }, { cwd, configVariables: { ORGFORM_VAR_EMAIL: 'a@b.test' } });
    expect(selected.organisations.map((o) => o.slug)).toEqual(['globex']);
    expect(desired.organisations).toHaveLength(2);
  });

  it('throws every problem at once, saying nothing was read from the service', async () => {
    const cwd = await makeWorkspace({ 'orgs.yaml': TWO });
    const error = await loadDesiredState({ files: [] }, { cwd }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toBe('The configuration has 1 problem in 1 file; nothing was read from the service.');
    expect((error as ConfigError).problems[0]).toMatchObject({ file: 'orgs.yaml', line: 6 });
  });

  it('refuses a shard that is not i/n', async () => {
    const cwd = await makeWorkspace({ 'orgs.yaml': 'version: 1\norganisations: {}\n' });
    await expect(loadDesiredState({ files: [], shard: '3/2' }, { cwd })).rejects.toBeInstanceOf(UsageError);
  });
});
