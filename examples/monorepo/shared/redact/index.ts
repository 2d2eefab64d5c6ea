const SECRET = /\b(?:sk|ghp|xox[bp])[-_][A-Za-z0-9_-]{8,}/g;

export function redact(fields: Record<string, unknown>): Record<string, unknown> {
  const masked: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    masked[key] = typeof value === 'string' ? value.replace(SECRET, '[redacted]') : value;
  }
  return masked;
}

export function containsSecret(text: string): boolean {
  return new RegExp(SECRET.source).test(text);
}
