import { expect } from 'vitest';
import { OrgformError } from '../../src/errors.js';

/** The OrgformError a promise rejects with; fails the test when it resolves or rejects otherwise. */
export async function rejection(promise: Promise<unknown>): Promise<OrgformError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(OrgformError);
    return err as OrgformError;
  }
  throw new Error('expected a rejection');
}
