// Pins the examples that the package ships (and `orgform init` writes) to the commit of the release
// being packed, the tag as the comment: `uses: orgform/orgform@<sha> # vX.Y.Z` in the GitHub
// workflows, the component's raw URL at `<sha>` in the GitLab example. The repository's copies name
// the tag (its commit is not known before the tag exists); the release workflow runs this on the
// tag's commit just before `npm pack`.
//
//   node scripts/pin-release.mjs COMMIT_SHA
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * `text` with this release's tag pins replaced by the commit's.
 * @param {string} text
 * @param {string} version  package.json's
 * @param {string} sha      40 hexadecimal digits
 */
export function pinRelease(text, version, sha) {
  if (!/^[0-9a-f]{40}$/.test(sha)) throw new Error(`not a commit SHA: ${sha}`);
  const tag = `v${version}`.replace(/\./g, '\\.');
  return text
    .replace(new RegExp(`(uses: orgform/orgform@)${tag}$`, 'gm'), `$1${sha} # v${version}`)
    .replace(new RegExp(`(raw\\.githubusercontent\\.com/orgform/orgform/)${tag}(/templates/orgform\\.yml)$`, 'gm'), `$1${sha}$2 # v${version}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const github = join(root, 'examples', 'github-actions');
  const files = [...readdirSync(github).filter((name) => name.endsWith('.yml')).map((name) => join(github, name)), join(root, 'examples', 'gitlab-ci.yml')];
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const pinned = pinRelease(text, version, process.argv[2] ?? '');
    if (pinned === text) throw new Error(`${file} names no v${version} to pin`);
    writeFileSync(file, pinned);
    console.log(`${file.slice(root.length + 1)}: v${version} pinned to ${process.argv[2]}`);
  }
}
