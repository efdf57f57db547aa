/** What the two drivers (pg, PGlite) have in common: parameterised queries and transactions. */
export interface SqlClient {
  query<Row = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<Row[]>;
  /** Runs several statements (a migration file) without parameters. */
  exec(sql: string): Promise<void>;
  /** Runs `fn` in one transaction; nested calls join the outer one. */
  transaction<T>(fn: (tx: SqlClient) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}
