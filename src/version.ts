/**
 * orgform's version, written once: `--version` prints it and the Terraform HTTP state records it as
 * its `terraform_version`. test/version.test.ts holds it equal to package.json's.
 */
export const VERSION = '0.1.0';
