/**
 * The PID of a process that has just ended (a child run to its end), for the files a killed process
 * leaves: named with a PID, they are orphans once it is gone. (A PID is reused only after the
 * system has gone round its whole range.)
 */
import { spawn } from 'node:child_process';

export async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise<void>((resolve, reject) => {
    child.once('exit', () => resolve());
    child.once('error', reject);
  });
  if (child.pid === undefined) throw new Error('the child got no PID');
  return child.pid;
}
