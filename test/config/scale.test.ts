import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { parseYamlFast } from '../../src/config/parse-yaml-fast.js';
import { makeWorkspace } from '../support/workspace.js';

const GENERATE = join(import.meta.dirname, '..', '..', 'examples', 'generate-bulk.mjs');

describe('validating 10,000 organisations', () => {
  // How fast is the bench's to measure (`npm run bench`: validate 10,000 < 500 ms); here, that the
  // fast parser takes the file and every organisation loads.
  it('takes the fast parser and loads every organisation', async () => {
    const out = await makeWorkspace();
    execFileSync(process.execPath, [GENERATE, '--count', '10000', '--files', '1', '--out', out]);
    const text = readFileSync(join(out, 'orgs-01.yaml'), 'utf8');
    // The yaml package needs seconds for this file: the fast parser is what keeps it quick.
    expect(parseYamlFast(text)).toBeDefined();

    const result = await loadConfig(['orgs-01.yaml'], { cwd: out, variables: {} });
    expect(result.ok && result.state.organisations.length).toBe(10_000);
  });

  it('regenerates the committed bulk example byte for byte', async () => {
    const out = await makeWorkspace();
    execFileSync(process.execPath, [GENERATE, '--out', out]);
    for (const name of ['orgs-01.yaml', 'orgs-02.yaml', 'orgs-03.yaml']) {
      const committed = readFileSync(join(import.meta.dirname, '..', '..', 'examples', 'bulk', name), 'utf8');
      // The modeline differs (relative to where the files are written); the organisations must not.
      expect(readFileSync(join(out, name), 'utf8').split('\n').slice(1)).toEqual(committed.split('\n').slice(1));
    }
  });
});
