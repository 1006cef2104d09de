/**
 * Patterns of credentials that must never appear in a runtime response. Names
 * only are reported, never the matched text: the report is shown in the console
 * and stored.
 */
const CREDENTIAL_PATTERNS: Array<{ name: string; pattern: RegExp }> = [
  { name: 'a private key', pattern: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----/ },
  { name: 'an AWS access key id', pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/ },
  { name: 'an AWS secret access key', pattern: /aws_?secret_?access_?key["'\s:=]+[A-Za-z0-9/+=]{40}/i },
  { name: 'a GitHub token', pattern: /\bgh[pousr]_[A-Za-z0-9]{36,}\b/ },
  { name: 'a Slack token', pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}/ },
  { name: 'a Stripe secret key', pattern: /\b[rs]k_live_[A-Za-z0-9]{16,}/ },
  { name: 'a Google API key', pattern: /\bAIza[0-9A-Za-z_-]{35}\b/ },
  { name: 'a JSON Web Token', pattern: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/ },
  { name: 'a bearer credential', pattern: /\bBearer\s+[A-Za-z0-9._~+/=-]{16,}/ },
  { name: 'a URL with a password', pattern: /\b[a-z][a-z0-9+.-]*:\/\/[^\s:@/"']+:[^\s@/"']+@/i },
  {
    name: 'a credential-named field with a value',
    pattern:
      /["'](?:password|passwd|pwd|secret|client_?secret|api_?key|apikey|access_?token|refresh_?token|auth_?token|private_?key|secret_?key|session_?token)["']\s*:\s*["'][^"']{4,}["']/i,
  },
];

/**
 * Names of the credentials found in `text`. `knownSecrets` are values the service
 * itself sent (the bearer token of the run): a runtime that echoes them leaks them.
 */
export function findCredentials(text: string, knownSecrets: Array<{ name: string; value: string }> = []): string[] {
  const found: string[] = [];
  for (const { name, value } of knownSecrets) if (value.length > 0 && text.includes(value)) found.push(name);
  for (const { name, pattern } of CREDENTIAL_PATTERNS) if (pattern.test(text)) found.push(name);
  return found;
}
