import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SETTINGS_TABLE } from '../../src/cli/settings-table.js';

/** The rows of docs/cli.md's table of settings: the variables and the option its first column names, and its range column. */
function documentedRows(): Array<{ variables: string[]; option?: string; range: string; line: string }> {
  const page = readFileSync(new URL('../../docs/cli.md', import.meta.url), 'utf8');
  const section = page.slice(page.indexOf('## Connection and credentials'));
  const lines = section.split('\n').filter((line) => line.startsWith('| `'));
  return lines.map((line) => {
    const [setting = '', range = ''] = line.split(/(?<!\\)\|/).slice(1, 3).map((cell) => cell.trim());
    const names = [...setting.matchAll(/`([^`]+)`/g)].map((m) => m[1]!.split(' ')[0]!);
    const option = names.find((name) => name.startsWith('--'));
    return { variables: names.filter((name) => /^[A-Z][A-Z0-9_]*$/.test(name)), ...(option === undefined ? {} : { option }), range: range.replaceAll(',', ''), line };
  });
}

describe('the table of settings', () => {
  const documented = documentedRows();

  it('is docs/cli.md’s table, row for row: the same variables and option, range and default', () => {
    expect(documented.map((row) => row.variables)).toEqual(SETTINGS_TABLE.map((row) => [...row.variables]));
    SETTINGS_TABLE.forEach((row, i) => {
      const doc = documented[i]!;
      expect(doc.option, doc.line).toBe(row.option);
      if (row.range !== undefined) expect(doc.range, doc.line).toContain(`${row.range.min} to ${row.range.max}`);
      if (row.default !== undefined) expect(doc.range, doc.line).toContain(`(${row.default.replaceAll(',', '')}`);
    });
  });

  it('names, for each setting, a module that there is', () => {
    for (const row of SETTINGS_TABLE) expect(existsSync(new URL(`../../src/${row.consumer}`, import.meta.url)), row.consumer).toBe(true);
  });
});
