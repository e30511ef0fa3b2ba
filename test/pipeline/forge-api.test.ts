import { describe, expect, it } from 'vitest';
import { asSentence, checkToken, nextPageAddress, redactAddress } from '../../pipeline/forge-api.mjs';

describe('checkToken', () => {
  it('drops surrounding white space, as a header value’s is', () => {
    expect(checkToken('GITLAB_API_TOKEN', ' glpat-abc\n')).toBe('glpat-abc');
  });

  it('refuses a control character, a space or a character outside ASCII inside it, naming the variable and never the value', () => {
    for (const [token, kind] of [
      ['glpat-SECRET\nX', 'a control character (U+000A)'],
      ['ghp_SECRET\rX', 'a control character (U+000D)'],
      ['ghp_SEC\u0000RET', 'a control character (U+0000)'],
      ['ghp_SEC RET', 'a space (U+0020)'],
      ['ghp_SECRET\u00e9', 'a character outside ASCII (U+00E9)'],
    ] as const) {
      expect(() => checkToken('GITLAB_API_TOKEN', token)).toThrow(`GITLAB_API_TOKEN holds ${kind}, so it cannot be sent as a header and was not used`);
      try {
        checkToken('GITLAB_API_TOKEN', token);
      } catch (err) {
        expect((err as Error).message).not.toMatch(/SEC|RET|%0D/);
      }
    }
  });
});

describe('redactAddress', () => {
  it('hides user info and every query value, and drops the fragment', () => {
    expect(redactAddress('https://gitlab-ci-token:glpat-x@gitlab.test/api/v4/state?private_token=glpat-y&ID=1#frag')).toBe('https://***@gitlab.test/api/v4/state?private_token=***&ID=***');
    expect(redactAddress('https://s3.test/b/k?X-Amz-Signature=abc&X-Amz-Credential=def')).toBe('https://s3.test/b/k?X-Amz-Signature=***&X-Amz-Credential=***');
    expect(redactAddress('http://host.test/plain')).toBe('http://host.test/plain');
    expect(redactAddress('not a url glpat-z')).toBe('(an address that is not a URL)');
  });
});

describe('nextPageAddress', () => {
  const page = 'https://api.test/list?per_page=100';
  it('takes the Link header’s next, relative ones too, and says there is none when Link has no next', () => {
    expect(nextPageAddress(new Headers({ link: '<https://api.test/list?page=2>; rel="next", <https://api.test/list?page=9>; rel="last"' }), page)).toBe('https://api.test/list?page=2');
    expect(nextPageAddress(new Headers({ link: '</list?page=3>; rel="next"' }), page)).toBe('https://api.test/list?page=3');
    expect(nextPageAddress(new Headers({ link: '<https://api.test/list?page=1>; rel="prev"' }), page)).toBeUndefined();
  });

  it('takes GitLab’s x-next-page (empty on the last page), and says nothing when neither header is there', () => {
    expect(nextPageAddress(new Headers({ 'x-next-page': '4' }), page)).toBe('https://api.test/list?per_page=100&page=4');
    expect(nextPageAddress(new Headers({ 'x-next-page': '' }), page)).toBeUndefined();
    expect(nextPageAddress(new Headers(), page)).toBeNull();
  });
});

describe('asSentence', () => {
  it('ends a message with one full stop', () => {
    expect([asSentence('HTTP 403'), asSentence('gave up.'), asSentence('is the API address right?')]).toEqual(['HTTP 403.', 'gave up.', 'is the API address right?']);
  });
});
