// Child processes for the bench: the emulator (stopped by the bench itself, even on failure), timed
// orgform runs (wall time, peak RSS through GNU time -v when present, else the probe), and cold starts.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const ROOT = new URL('../../', import.meta.url).pathname.replace(/\/$/, '');
export const BIN = join(ROOT, 'bin', 'orgform.js');
export const PROBE = join(ROOT, 'scripts', 'bench', 'probe.mjs');

/** Every child still running, so that an exit handler can stop them (by their own pid only). */
const running = new Set();

/**
 * Timed runs start in a process group of their own (the child is GNU time, its child node): the
 * group, whose id is the child's own pid, is what is stopped, so node never outlives a killed time.
 */
function kill(child, signal) {
  try {
    if (child.ownGroup) process.kill(-child.pid, signal);
    else child.kill(signal);
  } catch {
    // already gone
  }
}

export function stopAllChildren() {
  for (const child of running) kill(child, 'SIGKILL');
  running.clear();
}

export function track(child) {
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}

/** GNU time with -v reports "Maximum resident set size (kbytes)" of the child, however it ends. */
export const GNU_TIME = (() => {
  const path = '/usr/bin/time';
  if (!existsSync(path)) return undefined;
  const probe = spawnSync(path, ['-v', process.execPath, '-e', ''], { encoding: 'utf8' });
  return probe.status === 0 && /Maximum resident set size/.test(probe.stderr) ? path : undefined;
})();

/**
 * Starts `orgform emulator` as its own process and resolves when it prints its URL.
 * @returns {Promise<{url: string, pid: number, stop(): Promise<void>, counters(): Promise<any>, resetCounters(): Promise<void>}>}
 */
export function startEmulatorProcess({ data, latencyMs, slugDelayMs, cwd, extraArgs = [] }) {
  const args = [BIN, 'emulator', '--port', '0', '--host', '127.0.0.1', '--data', data, '--latency', String(latencyMs), '--slug-delay', String(slugDelayMs), ...extraArgs];
  const child = track(spawn(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] }));
  let output = '';
  return new Promise((resolve, reject) => {
    // A million organisations take a while to load.
    const timer = setTimeout(() => fail(new Error(`the emulator did not start within 180 s:\n${output}`)), 180_000);
    const fail = (err) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(err);
    };
    child.once('error', fail);
    child.once('exit', (code, signal) => fail(new Error(`the emulator exited (${code ?? signal}) before listening:\n${output}`)));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.stdout.on('data', (chunk) => {
      output += chunk;
      const m = /listening on (http:\/\/\S+)/.exec(output);
      if (!m) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      child.stdout.removeAllListeners('data');
      child.stdout.resume();
      const url = m[1];
      resolve({
        url,
        pid: child.pid,
        cpuMs: () => processCpuMs(child.pid),
        counters: async () => (await fetch(`${url}/__emulator/counters`)).json(),
        resetCounters: async () => {
          const res = await fetch(`${url}/__emulator/counters/reset`, { method: 'POST' });
          await res.arrayBuffer();
          if (!res.ok) throw new Error(`counter reset answered ${res.status}`);
        },
        stop: () => stopChild(child),
      });
    });
  });
}

/** Clock ticks per second, for /proc/PID/stat. */
const CLK_TCK = (() => {
  const r = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  return Number(r.stdout) > 0 ? Number(r.stdout) : 100;
})();

/** User + system CPU time of a running process, from /proc (Linux); undefined elsewhere. */
export function processCpuMs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is field 3 (state): utime and stime are fields 14 and 15.
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
  } catch {
    return undefined;
  }
}

/** SIGTERM (the emulator stops cleanly on it), SIGKILL after 5 s. */
function stopChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

function parseGnuTime(text) {
  const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(text);
  return rss ? Number(rss[1]) : undefined;
}

/** User + system time, in milliseconds, from GNU time -v. */
function parseGnuCpuMs(text) {
  const user = /User time \(seconds\): ([\d.]+)/.exec(text);
  const system = /System time \(seconds\): ([\d.]+)/.exec(text);
  return user && system ? (Number(user[1]) + Number(system[1])) * 1000 : undefined;
}

/**
 * Runs `node [--import probe] bin/orgform.js ...args` under GNU time when present; stdout and
 * stderr go to files (as in a CI log), not through this process. With `timeoutMs`, a run that
 * takes longer is killed (SIGKILL, by its own pid) and resolves with `timedOut: true`.
 */
export function runOrgform(args, options) {
  return runNode([BIN, ...args], options);
}

/** The same for any script (the slug fallback). */
export function runNode(scriptArgs, { cwd, env, outFile, errFile, probeFile, timeFile, timeoutMs }) {
  const nodeArgs = [...(probeFile ? ['--import', PROBE] : []), ...scriptArgs];
  const [command, commandArgs] = GNU_TIME ? [GNU_TIME, ['-v', '-o', timeFile, process.execPath, ...nodeArgs]] : [process.execPath, nodeArgs];
  const out = openSync(outFile, 'w');
  const err = openSync(errFile, 'w');
  const started = process.hrtime.bigint();
  const child = spawn(command, commandArgs, { cwd, env: { ...env, ...(probeFile ? { ORGFORM_BENCH_PROBE: probeFile } : {}) }, stdio: ['ignore', out, err], detached: true });
  child.ownGroup = true;
  track(child);
  let timedOut = false;
  const killer = timeoutMs === undefined ? undefined : setTimeout(() => ((timedOut = true), kill(child, 'SIGKILL')), timeoutMs);
  return new Promise((resolve, reject) => {
    child.once('error', (e) => {
      clearTimeout(killer);
      closeSync(out);
      closeSync(err);
      reject(e);
    });
    child.once('exit', (code, signal) => {
      const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
      clearTimeout(killer);
      closeSync(out);
      closeSync(err);
      const probe = probeFile && existsSync(probeFile) ? JSON.parse(readFileSync(probeFile, 'utf8')) : undefined;
      const gnuText = GNU_TIME && existsSync(timeFile) ? readFileSync(timeFile, 'utf8') : undefined;
      const gnuRssKB = gnuText === undefined ? undefined : parseGnuTime(gnuText);
      resolve({
        code,
        signal,
        timedOut,
        wallMs,
        probe,
        peakRssKB: gnuRssKB ?? probe?.maxRssKB,
        cpuMs: (gnuText === undefined ? undefined : parseGnuCpuMs(gnuText)) ?? (probe ? probe.userCpuMs + probe.systemCpuMs : undefined),
        rssSource: gnuRssKB !== undefined ? 'GNU time -v' : probe ? 'process.resourceUsage().maxRSS' : 'none',
        stdout: readFileSync(outFile, 'utf8'),
        stderr: readFileSync(errFile, 'utf8'),
      });
    });
  });
}

/** Wall time of one short process (no GNU time, no probe: nothing added to the start). */
export function timeOnce(args, { cwd, env }) {
  const started = process.hrtime.bigint();
  const result = spawnSync(process.execPath, args, { cwd, env, stdio: 'ignore' });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.status !== 0) throw new Error(`node ${args.join(' ')} exited ${result.status ?? result.signal}`);
  return ms;
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}
