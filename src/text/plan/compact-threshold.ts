/**
 * Above this many changes a plan is too long to read block by block and an apply log too long to
 * read line by line: `plan` prints one line per change, and apply in a log (not a terminal, not
 * --format json) shows a digest of the plan and progress lines instead of a line per change.
 * At or below it, both print what they always did, so small plans and demos keep their shape.
 */
export const COMPACT_THRESHOLD = 50;
