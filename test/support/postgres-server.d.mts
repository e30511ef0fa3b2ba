export function findPostgresBin(): string;
export function startPostgres(): Promise<{ url: string; port: number; bin: string; stop(): void }>;
