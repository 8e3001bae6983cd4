/**
 * A fuzz campaign: rounds over every operation of the document, one seeded case per
 * operation per round, sent as the world's owner (session and CSRF token), each from an
 * address of its own so per-IP limits and lockouts never shut the owner out. A 5xx is a
 * finding; a 401 on a session route means an earlier case ended the session (logout,
 * logout-all…): the owner logs in again and the case is sent once more.
 */
import { CaseMaker, describeCase, send, type Actor, type FuzzCase, type Outcome } from './cases.ts';
import { operationsOf, type OpenApiDocument, type Operation } from './operations.ts';
import { Seeded } from './random.ts';
import type { World } from './world.ts';

export interface Finding {
  fuzzCase: FuzzCase;
  outcome: Outcome;
  /** The request and answer in one line, to replay or to copy into a regression test. */
  description: string;
}

export interface CampaignResult {
  seed: number;
  cases: number;
  /** Answers by status. */
  statuses: Map<number, number>;
  findings: Finding[];
  sessionsRenewed: number;
  /** The operations that answered at least one case. */
  answered: Set<string>;
}

export interface CampaignOptions {
  document: OpenApiDocument;
  world: World;
  owner: Actor;
  /** Logs the owner in again (its session was ended by a case). */
  renewSession: () => Promise<void>;
  seed: number;
  rounds: number;
  /** Only these operations (default: every one in the document). */
  operations?: Operation[];
  /** Called after each case (progress lines in the benchmark). */
  onCase?: (index: number, fuzzCase: FuzzCase, outcome: Outcome) => void;
}

/** The same generator for an operation in every run of a seed, whatever else the document holds. */
export function operationRandom(seed: number, operation: Operation): Seeded {
  return new Seeded(seed).fork(operation.name);
}

export async function runCampaign(options: CampaignOptions): Promise<CampaignResult> {
  const { document, world, owner, seed } = options;
  const operations = options.operations ?? operationsOf(document);
  const randoms = new Map(operations.map((operation) => [operation.name, operationRandom(seed, operation)]));
  const result: CampaignResult = { seed, cases: 0, statuses: new Map(), findings: [], sessionsRenewed: 0, answered: new Set() };
  for (let round = 0; round < options.rounds; round++) {
    for (const operation of operations) {
      const random = randoms.get(operation.name)!;
      const maker = new CaseMaker(document, (name) => world.madeId(name, operation));
      const fuzzCase = maker.make(operation, random);
      const from = { 'X-Forwarded-For': `10.${random.int(0, 255)}.${random.int(0, 255)}.${random.int(1, 254)}` };
      let outcome = await send(owner, fuzzCase.request, from);
      result.answered.add(operation.name);
      if (outcome.status === 401 && !operation.public) {
        await options.renewSession();
        result.sessionsRenewed++;
        outcome = await send(owner, fuzzCase.request, from);
      }
      result.cases++;
      result.statuses.set(outcome.status, (result.statuses.get(outcome.status) ?? 0) + 1);
      if (outcome.status >= 500) result.findings.push({ fuzzCase, outcome, description: describeCase(fuzzCase, outcome) });
      options.onCase?.(result.cases, fuzzCase, outcome);
    }
  }
  return result;
}
