// Types of kakapo-proxy's main API (require('kakapo-proxy') / import ... from 'kakapo-proxy').

/** A record mode: none (replay only), new (replay hits, record misses), all (re-record), once (replay
 * if the cassette exists, else record), passthrough (forward only). */
export type Mode = 'none' | 'new' | 'all' | 'once' | 'passthrough';

export interface ServerOptions {
  /** The kakapo executable (else KAKAPO_BIN, then @kakapo-proxy/linux-x64, then kakapo on PATH). */
  binary?: string;
  /** The folder cassette paths are relative to (`kakapo serve --cassette-dir`); default: the working directory. */
  cassetteDir?: string;
  /** The sessions' default mode; else KAKAPO_RECORD, else `once`. */
  mode?: Mode;
  /** More `kakapo serve` arguments, such as ['--upstream-ca', 'ca.pem']. */
  serveArgs?: string[];
  /** Hosts reached directly, not through Kakapo: NO_PROXY's forms (name, .domain, host:port, *). */
  ignoreHosts?: string[];
  /** How long Kakapo may take to say its port, in ms (default 60000). */
  startTimeout?: number;
  /** The sessions' dispatchers' headersTimeout, in ms (default 300000, undici's; 0: none). */
  headersTimeout?: number;
  /** The sessions' dispatchers' bodyTimeout, in ms (default 300000, undici's; 0: none). */
  bodyTimeout?: number;
}

export interface Match {
  ignoreQuery?: string[];
  ignoreBodyFields?: string[];
  headers?: string[];
}

export interface OpenOptions {
  /** The session's mode; else the server's. */
  mode?: Mode;
  /** Whether a miss should fail the test (reported in the summary; the adapters fail the test). Default true. */
  strict?: boolean;
  match?: Match;
  store?: 'own' | 'shared';
  /** More hosts reached directly (added to the server's). */
  ignoreHosts?: string[];
  /** Route Node's global fetch() through the session while it is open. Default true. */
  fetch?: boolean;
  /** Apply `env` to process.env while the session is open. Default false (the adapters: true). */
  env?: boolean;
  /** Mode none on a cassette that does not exist is an error (default true); false opens it, and every request misses. */
  requireCassette?: boolean;
  /**
   * The dispatcher's wait for response headers, in ms (else the server's option, else 300000; 0: none):
   * the connection to Kakapo and an https: tunnel (CONNECT, TLS handshake) are bounded by it too.
   * A request past it fails with an error whose code is UND_ERR_HEADERS_TIMEOUT (UND_ERR_CONNECT_TIMEOUT
   * for the connection or tunnel).
   */
  headersTimeout?: number;
  /** The dispatcher's wait between pieces of a response body, in ms (else the server's, else 300000; 0: none): UND_ERR_BODY_TIMEOUT. */
  bodyTimeout?: number;
}

export interface Near {
  interaction: number;
  method: string;
  url: string;
  differences: string[];
}

export interface Miss {
  method: string;
  url: string;
  line?: string;
  nearest: Near[];
}

export interface Summary {
  id: string;
  cassette: string;
  mode: string;
  strict: boolean;
  replayed: number;
  recorded: number;
  misses: Miss[];
  missCount?: number;
  unused: { interaction: number; method: string; url: string; label?: string }[];
  warning?: string;
  saveError?: string;
  [other: string]: unknown;
}

/** An undici-style dispatcher: fetch(url, { dispatcher }), undici.request(url, { dispatcher }). */
export declare class KakapoDispatcher {
  /** Default headersTimeout of its requests, in ms (a request's dispatch options may name its own). */
  readonly headersTimeout: number;
  /** Default bodyTimeout of its requests, in ms. */
  readonly bodyTimeout: number;
  dispatch(options: object, handler: object): boolean;
  close(): Promise<void>;
  close(callback: (error: Error | null) => void): void;
  destroy(error?: Error): Promise<void>;
  destroy(error: Error | null, callback: (error: Error | null) => void): void;
}

export declare class Session {
  readonly server: KakapoServer;
  /** The cassette file (absolute path). */
  readonly cassette: string;
  readonly id: string;
  /** http://ID:@127.0.0.1:PORT */
  readonly proxy: string;
  /** Basic base64("ID:"), the Proxy-Authorization that names the session. */
  readonly proxyAuthorization: string;
  /** Kakapo's own URL, for clients pointed straight at it (with `headers`). */
  readonly url: string;
  readonly headers: { 'X-Kakapo-Session': string };
  /** The mode Kakapo chose (`once` becomes `none` or `new`). */
  readonly mode: string;
  readonly strict: boolean;
  /** The system's CAs and Kakapo's, in one PEM file. */
  readonly caBundle: string;
  readonly ignoreHosts: string[];
  readonly dispatcher: KakapoDispatcher;
  /** The summary, once closed. */
  readonly summary: Summary | null;
  /** HTTP(S)_PROXY (both cases), NODE_EXTRA_CA_CERTS, SSL_CERT_FILE, REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE, NO_PROXY (both cases). */
  readonly env: Record<string, string>;
  applyEnv(): this;
  restoreEnv(): void;
  routeFetch(): this;
  unrouteFetch(): void;
  /** Requests Kakapo saw matching method and path pattern (/users/:id, *, **), server-wide. */
  count(method?: string, path?: string): Promise<number>;
  /** Ends the session: fetch() and the environment are put back, Kakapo saves the cassette. */
  close(): Promise<Summary>;
  /** Kakapo's report of the misses, or null when there were none. */
  missReport(summary?: Summary): string | null;
  unusedReport(summary?: Summary): string | null;
}

export declare class KakapoServer {
  constructor(options?: ServerOptions);
  readonly url: string;
  readonly port: number;
  /** Kakapo's pid (on Linux, its watchdog's: the watchdog ends when Kakapo does). */
  readonly pid: number | undefined;
  readonly binary: string | undefined;
  readonly cassetteDir: string;
  readonly mode: Mode | undefined;
  readonly caBundle: string;
  /** Kakapo's CA certificate (PEM file). */
  readonly kakapoCa: string;
  readonly running: boolean;
  start(): Promise<this>;
  /** Opens a session on `cassette`, relative to cassetteDir (.json added when it has no extension). */
  open(cassette: string, options?: OpenOptions): Promise<Session>;
  /** Calls Kakapo's admin API; the decoded JSON answer. */
  admin(method: string, path: string, body?: unknown): Promise<any>;
  /** SIGINT (Kakapo saves open sessions), then waits for it to exit. */
  stop(): Promise<void>;
  /** Kakapo's last lines of output. */
  tail(lines?: number): string;
}

export declare class KakapoError extends Error {}

/** The process's server for these options, started on first use (the same options give the same server). */
export declare function start(options?: ServerOptions): Promise<KakapoServer>;
/** A session on the default server (start()). */
export declare function open(cassette: string, options?: OpenOptions): Promise<Session>;
/** Stops every server start() started. */
export declare function stop(): Promise<void>;
export declare const MODES: readonly Mode[];
export declare function recordMode(mode?: string, env?: Record<string, string | undefined>): Mode;
export declare function findBinary(options?: { binary?: string; env?: Record<string, string | undefined>; cwd?: string }): string;
/** pytest-kakapo's file-safe name for a test. */
export declare function fileSafe(name: string): string;
/** cassettes/<test file stem>/<safe test name>.json beside the test file. */
export declare function testCassette(testFile: string, testName: string): string;
export declare function missReport(summary: Summary, context?: { cassette?: string; mode?: string; id?: string }): string | null;
