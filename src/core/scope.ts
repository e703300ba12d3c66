/** Scopes, broadest first: org > repo > service:<name> > environment:<env>; plus customer. */
import { shown } from './redact.js';

export type ScopeKind = 'org' | 'repo' | 'customer' | 'service' | 'environment';
export interface ParsedScope {
  kind: ScopeKind;
  name?: string;
}

export const ENVIRONMENTS = ['prod', 'staging'] as const;
const SERVICE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

export const SCOPE_HELP = 'repo, org, customer, service:<name> or environment:<prod|staging>';

/** Parses a scope string; returns an error message when it is not one of the allowed forms. */
export function parseScope(scope: string): ParsedScope | { error: string } {
  if (scope === 'repo' || scope === 'org' || scope === 'customer') return { kind: scope };
  const m = /^(service|environment):(.*)$/.exec(scope);
  if (!m) return { error: `must be ${SCOPE_HELP} (got ${shown(scope)})` };
  const [, kind, name] = m as unknown as [string, 'service' | 'environment', string];
  if (kind === 'service') {
    if (!SERVICE_NAME.test(name)) {
      return { error: `service name must be letters, digits, ".", "_" or "-" (got ${shown(name)})` };
    }
    return { kind, name };
  }
  if (!(ENVIRONMENTS as readonly string[]).includes(name)) {
    return { error: `environment must be prod or staging (got ${shown(name)})` };
  }
  return { kind, name };
}

/** The scopes a query for `scope` returns: a narrow scope also sees the broad ones above it (undefined: every scope). */
export function visibleScopes(scope: string | undefined): Set<string> | undefined {
  if (scope === undefined || scope === '' || scope === 'any' || scope === '*') return undefined;
  // A scope sees itself and the broader scopes above it: org sees only org, repo sees repo and org.
  if (scope === 'org') return new Set(['org']);
  return new Set([scope, 'repo', 'org']);
}
