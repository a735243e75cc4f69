// Types of kakapo-proxy/node-test, kakapo-proxy/jest and kakapo-proxy/vitest.
import type { KakapoServer, Mode, Match, Session, Summary } from './index';

export interface AdapterOptions {
  /** Every test's mode; else KAKAPO_RECORD, else once. */
  mode?: Mode;
  /** Fail the test when it missed (default true). */
  strict?: boolean;
  match?: Match;
  store?: 'own' | 'shared';
  ignoreHosts?: string[];
  /**
   * The cassette for a test, relative to the cassettes/ folder beside the test file. `name` is the test's
   * name as the runner gives it: with its describe blocks' (Jest, Vitest; node:test on Node 22.3 and 20.16
   * on, `outer > test`), else its own.
   */
  cassette?: (test: { file: string; name: string }) => string;
  /** Route fetch() through the test's session (default true). */
  fetch?: boolean;
  /** Apply the session's environment to process.env during the test (default true). */
  env?: boolean;
  /** The sessions' dispatchers' headersTimeout and bodyTimeout, in ms (default 300000 each; 0: none). */
  headersTimeout?: number;
  bodyTimeout?: number;
  /** The test file, when the adapter cannot tell it. */
  file?: string;
  binary?: string;
  cassetteDir?: string;
  serveArgs?: string[];
  startTimeout?: number;
}

export interface KakapoHandle {
  /** The session of the test running now (null between tests). */
  readonly session: Session | null;
  /** The summary of the last session that ended. */
  readonly summary: Summary | null;
  readonly server: KakapoServer | null;
}

/** Registers beforeEach/afterEach hooks that give every test its own cassette session. */
export declare function useKakapo(options?: AdapterOptions): KakapoHandle;
export { KakapoError } from './index';
