/**
 * The emulator profiles the behavioural suites run under (issue: tests across the matrix): lenient
 * plays the project's own answers to the interface's open points, strict the hardest plausible
 * answer of each (see src/emulator/behaviour.ts). Listed here, not taken from PROFILE_NAMES, so
 * that a new profile is added to the matrix on purpose.
 */
import type { ProfileName } from '../../src/emulator/behaviour.js';

export const MATRIX_PROFILES = ['lenient', 'strict'] as const satisfies readonly ProfileName[];
