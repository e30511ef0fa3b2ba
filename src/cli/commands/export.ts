import { UsageError } from '../../errors.js';
import type { CliIO, ExitCode } from '../io.js';

export async function run(_flags: unknown, _io: CliIO): Promise<ExitCode> {
  throw new UsageError('orgform export is not available yet.');
}
