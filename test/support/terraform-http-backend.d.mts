export interface BackendRequest {
  method: string;
  path: string;
  query: string;
  user: string | undefined;
  bytes: number;
}

export interface TerraformBackend {
  url: string;
  requests: BackendRequest[];
  versions(path: string): Array<{ serial: number; body: string }>;
  lockOf(path: string): { ID: string; Who: string; Created: string } | null;
  takeLock(path: string, id?: string, who?: string): void;
  /** Stores a document of someone else's at `path`, as a new version. */
  store(path: string, body: string): void;
  lockWaiting(): boolean;
  releaseLocks(): void;
  close(): Promise<void>;
}

export function startTerraformBackend(options?: {
  users?: Record<string, string>;
  flavour?: 'gitlab' | 'gitea';
  lockedStatus?: 409 | 423;
  maxBytes?: number;
  /** Lock requests get no answer until releaseLocks(). */
  holdLocks?: boolean;
  /** false: every write is stored whoever holds the lock (default true: a write must name the lock's ID). */
  enforceLocks?: boolean;
  /** No Basic auth needed (a run carrying no credentials). */
  anonymous?: boolean;
}): Promise<TerraformBackend>;
