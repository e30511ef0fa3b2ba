/**
 * A real browser for the pages orgform writes: Debian's chromium driven by playwright-core, with a
 * fresh profile, nothing in the background that would make requests of its own, and every request
 * a page makes, every dialog it opens and every error it logs recorded. A page is opened from a
 * file, as a reviewer opens a downloaded artifact, and kept with its screenshot under
 * test-artifacts/pages/ (CI keeps that folder).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';

export const CHROMIUM = process.env.ORGFORM_TEST_CHROMIUM ?? '/usr/bin/chromium';
export const ARTIFACTS = join(import.meta.dirname, '..', '..', 'test-artifacts', 'pages');

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'orgform-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    viewport: { width: 1280, height: 1000 },
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * One browser for the test file that calls this (at its top level), launched before its first test
 * and closed after its last: `const browser = useBrowser();` then `browser()` in the tests.
 */
export function useBrowser(): () => Browser {
  let browser: Browser | undefined;
  beforeAll(async () => {
    browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });
  return () => {
    if (browser === undefined) throw new Error('the browser is not launched yet: call browser() inside a test');
    return browser;
  };
}

export interface OpenedPage {
  page: Page;
  /** Every request after the page's own file: an orgform page makes none. */
  requests: string[];
  /** alert(), confirm() and prompt() calls, dismissed. */
  dialogs: string[];
  /** Uncaught errors and console errors (a Content-Security-Policy refusal is one). */
  errors: string[];
  screenshot(name: string, options?: { fullPage?: boolean }): Promise<void>;
}

/**
 * Writes the page to test-artifacts/pages/NAME.html, opens it and waits for its script to have drawn
 * the table (`scripted: false`: a page without a table has no script, and is ready once loaded).
 */
export async function openPage(browser: Browser, name: string, html: string, options: { scripted?: boolean } = {}): Promise<OpenedPage> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const file = join(ARTIFACTS, `${name}.html`);
  writeFileSync(file, html);
  const url = pathToFileURL(file).href;
  const page = await browser.context.newPage();
  const opened: OpenedPage = {
    page,
    requests: [],
    dialogs: [],
    errors: [],
    screenshot: async (shot, options = {}) => {
      // From the top: a page scrolled down draws its sticky table heads where the scroll left them.
      if (options.fullPage === true) await page.evaluate('window.scrollTo(0, 0)');
      await page.screenshot({ path: join(ARTIFACTS, `${shot}.png`), fullPage: options.fullPage ?? false });
    },
  };
  page.on('request', (r) => {
    if (r.url() !== url) opened.requests.push(r.url());
  });
  page.on('dialog', (d) => {
    opened.dialogs.push(`${d.type()}: ${d.message()}`);
    void d.dismiss();
  });
  page.on('pageerror', (e) => opened.errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') opened.errors.push(m.text());
  });
  await page.goto(url);
  if (options.scripted !== false) await page.waitForSelector('html[data-ready="true"]', { timeout: 15_000 });
  return opened;
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/** axe-core's violations on the page as it is now, run from outside the page (its policy lets no script in). */
export async function findAccessibilityViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(AXE_SOURCE);
  return page.evaluate(
    `axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) })))`,
  ) as Promise<AxeViolation[]>;
}
