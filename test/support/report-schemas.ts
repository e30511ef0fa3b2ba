/**
 * The CI report formats orgform writes, checked against JSON Schemas written from GitLab's own
 * documentation and parser (see each schema's description): test/support/schemas/.
 */
import { readFileSync } from 'node:fs';
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';

// strictRequired off: the schema says "lines or positions" with anyOf of required, as GitLab documents it.
const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false });
const load = (name: string) => ajv.compile(JSON.parse(readFileSync(new URL(`./schemas/${name}.schema.json`, import.meta.url), 'utf8')));
const codeQuality = load('gitlab-codequality');
const gitlabTerraform = load('gitlab-terraform-report');

/** The problems with a Code Quality report's text; empty when it is valid. */
export function codeQualityErrors(text: string): string[] {
  // GitLab's parser refuses a byte order mark.
  if (text.charCodeAt(0) === 0xfeff) return ['starts with a byte order mark'];
  const doc: unknown = JSON.parse(text);
  const errors = codeQuality(doc) ? [] : describe(codeQuality.errors);
  const fingerprints = Array.isArray(doc) ? doc.map((i: { fingerprint?: unknown }) => i.fingerprint) : [];
  if (new Set(fingerprints).size !== fingerprints.length) errors.push('fingerprints are not unique');
  return errors;
}

/** The problems with a gitlab-terraform report's text; empty when it is valid. */
export function gitlabTerraformErrors(text: string): string[] {
  return gitlabTerraform(JSON.parse(text)) ? [] : describe(gitlabTerraform.errors);
}

function describe(errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`);
}
