import { request as httpsRequest, type RequestOptions } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

/**
 * What `kubectl get` asks the API server for: a meta.k8s.io Table, whose columns are the CRD's
 * printer columns and whose cells the API server computed from each object with their jsonPaths.
 * Reading it (rather than kubectl's text) shows each column's name, priority and cell exactly.
 */
export interface KubeTable {
  columns: { name: string; priority: number; type: string }[];
  /** One row per object: its name and its cells by column name. */
  rows: { name: string; cells: Record<string, unknown> }[];
}

export async function getTable(kubeConfig: KubeConfig, path: string): Promise<KubeTable> {
  const url = new URL(path, kubeConfig.getCurrentCluster()?.server ?? '');
  const options: RequestOptions = { headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } };
  await kubeConfig.applyToHTTPSOptions(options);
  const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const request = httpsRequest(url, options, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
    });
    request.on('error', reject);
    request.end();
  });
  const body = JSON.parse(text) as {
    kind?: string;
    columnDefinitions?: { name: string; priority?: number; type: string }[];
    rows?: { cells: unknown[]; object?: { metadata?: { name?: string } } }[];
  };
  if (body.kind !== 'Table') throw new Error(`GET ${path} answered ${status} without a Table: ${text}`);
  const columns = (body.columnDefinitions ?? []).map((column) => ({ name: column.name, priority: column.priority ?? 0, type: column.type }));
  const rows = (body.rows ?? []).map((row) => ({
    name: row.object?.metadata?.name ?? '',
    cells: Object.fromEntries(columns.map((column, index) => [column.name, row.cells[index]])),
  }));
  return { columns, rows };
}
