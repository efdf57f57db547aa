import type { JSX } from 'preact';
import { runPath, type RunShape, type ShapeVertex } from '../api.js';
import { Link } from '../router.js';

type State = ShapeVertex['state'];

/** Each state has a mark and a word besides its colour. */
const MARK: Record<State, string> = { waiting: '○', running: '◐', succeeded: '✓', failed: '✕', skipped: '↷', unknown: '?' };

// The drawing's grid, in px: a box per vertex, a column per depth.
const BOX_W = 184;
const BOX_H = 84;
const COL_GAP = 40;
const ROW_GAP = 12;

/** Each vertex's depth: the length of the longest depends_on path above it (the server checked there is no cycle). */
function depths(vertices: ShapeVertex[]): Map<string, number> {
  const byName = new Map(vertices.map((vertex) => [vertex.name, vertex]));
  const depth = new Map<string, number>();
  const of = (name: string): number => {
    const known = depth.get(name);
    if (known !== undefined) return known;
    const deps = byName.get(name)?.dependsOn ?? [];
    const found = deps.length === 0 ? 0 : 1 + Math.max(...deps.map(of));
    depth.set(name, found);
    return found;
  };
  for (const vertex of vertices) of(vertex.name);
  return depth;
}

function itemsText(items: NonNullable<ShapeVertex['items']>): string {
  const count = items.total === null ? `${items.started} items started` : `${items.total} items`;
  return `${count}: ${items.done} done${items.failed > 0 ? `, ${items.failed} failed` : ''}`;
}

/**
 * A pipeline's jobs or a graph's nodes as a DAG (`GET /v1/runs/:id/shape`): a column per depth,
 * a box per vertex with its state (mark, word and colour), a fan_out's items and a link to the
 * child run of its last attempt, and a line from each vertex to those that depend on it. The
 * drawing scrolls inside its own box, so a phone's page does not scroll sideways; the boxes are a
 * list in document order, each saying what it comes after, for a screen reader.
 */
export function Shape({ shape }: { shape: RunShape }): JSX.Element {
  const depth = depths(shape.vertices);
  const rows = new Map<number, number>();
  const at = new Map<string, { x: number; y: number }>();
  for (const vertex of shape.vertices) {
    const column = depth.get(vertex.name) ?? 0;
    const row = rows.get(column) ?? 0;
    rows.set(column, row + 1);
    at.set(vertex.name, { x: column * (BOX_W + COL_GAP), y: row * (BOX_H + ROW_GAP) });
  }
  const width = (Math.max(0, ...depth.values()) + 1) * (BOX_W + COL_GAP) - COL_GAP;
  const height = Math.max(1, ...rows.values()) * (BOX_H + ROW_GAP) - ROW_GAP;
  const noun = shape.kind === 'graph' ? 'node' : 'job';
  return (
    <section aria-labelledby="shape-title" class="shape">
      <h2 id="shape-title">
        Shape ({shape.vertices.length} {noun}s)
      </h2>
      <div class="shape-scroll" tabIndex={0} role="region" aria-label={`The run's ${noun}s and what each depends on`}>
        <div class="shape-canvas" style={{ width: `${width}px`, height: `${height}px` }}>
          <svg aria-hidden="true" width={width} height={height} class="shape-edges">
            {shape.vertices.flatMap((vertex) =>
              vertex.dependsOn.map((dep) => {
                const from = at.get(dep);
                const to = at.get(vertex.name);
                if (!from || !to) return null;
                const [x1, y1, x2, y2] = [from.x + BOX_W, from.y + BOX_H / 2, to.x, to.y + BOX_H / 2];
                return <path key={`${dep}>${vertex.name}`} d={`M${x1} ${y1} C${x1 + COL_GAP / 2} ${y1} ${x2 - COL_GAP / 2} ${y2} ${x2} ${y2}`} />;
              }),
            )}
          </svg>
          <ol class="shape-vertices">
            {shape.vertices.map((vertex) => {
              const { x, y } = at.get(vertex.name) ?? { x: 0, y: 0 };
              return (
                <li key={vertex.name} class={`vertex vertex-${vertex.state}`} data-vertex={vertex.name} style={{ left: `${x}px`, top: `${y}px`, width: `${BOX_W}px`, height: `${BOX_H}px` }}>
                  <span class="vertex-name" title={vertex.name}>
                    {vertex.runId ? (
                      <Link href={runPath(vertex.runId)} title={`its run: ${vertex.runId}`}>
                        {vertex.name}
                      </Link>
                    ) : (
                      vertex.name
                    )}
                  </span>
                  <span class="vertex-state" data-state={vertex.state}>
                    <span aria-hidden="true">{MARK[vertex.state]}</span> {vertex.state}
                  </span>
                  {vertex.items && <span class="vertex-items">{itemsText(vertex.items)}</span>}
                  <span class="visually-hidden">{vertex.dependsOn.length ? `, after ${vertex.dependsOn.join(', ')}` : ', first'}</span>
                </li>
              );
            })}
          </ol>
        </div>
      </div>
    </section>
  );
}
