// Fallback for the slug case while `orgform slugs check` is not available: the same checks through
// the built client, `parallelism` at a time. Usage: node slugs-direct.mjs BASE_URL PARALLELISM SLUGS_FILE
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pLimit from 'p-limit';
import { ROOT } from './processes.mjs';

const [baseUrl, parallelism, slugsFile] = process.argv.slice(2);
const { createClient } = await import(pathToFileURL(join(ROOT, 'dist', 'api', 'client.js')).href);
const client = createClient({ baseUrl, token: process.env.ORGFORM_TOKEN ?? 'demo-token' });
const limit = pLimit(Number(parallelism));
const slugs = readFileSync(slugsFile, 'utf8').split('\n').filter(Boolean);
try {
  const answers = await Promise.all(slugs.map((slug) => limit(async () => ({ slug, ...(await client.getSlugAvailability(slug)) }))));
  process.stdout.write(JSON.stringify(answers) + '\n');
} finally {
  await client.close();
}
