/**
 * A plan whose every outside value is hostile: markup that would end an element, run a script or
 * load an image, links, invisible and bidirectional characters, a line separator. The views must
 * show each as text, escaped, and run none of it.
 */
import type { Plan } from '../../../src/plan/types.js';
import { acceptInvitation, billing, makePlan, problem, removeChannel, revokeInvitation, setActive } from '../../support/plan-fixtures.js';

export const HOSTILE_VALUES = [
  '</details><script>alert(1)</script>',
  '</script><script>window.pwned = 1</script>',
  '<img src=x onerror="window.pwned = 2">',
  '<!-- comment --><svg onload="window.pwned = 3">',
  'javascript:alert(1)',
  '[click](javascript:alert(1))',
  'sub\u200b_acme',
  'acme\u202Egnp.exe',
  '\u2066isolate\u2069 and \ufeffbom',
  'line\u2028separator',
  '"quoted" & \'single\'',
] as const;

export function hostilePlan(): Plan {
  return makePlan({
    changes: [
      ...HOSTILE_VALUES.map((value, i) => billing(`o${i}`, { customerID: ['x', value] })),
      ...HOSTILE_VALUES.map((value, i) => billing(`p${i}`, { customerID: [value, 'y'] })),
      acceptInvitation('<b>bold</b>', '</details>'),
      revokeInvitation('zw\u200bslug', '<img src=x onerror="window.pwned = 4">'),
      removeChannel('q', 'javascript:alert(1)'),
      setActive('</script>', '<script>window.pwned = 5</script>'),
    ],
    problems: [problem('</details>', '<script>window.pwned = 6</script>')],
  });
}
