/**
 * Moves the row `id` to place `to` (clamped to the ends) and gives every row its new position,
 * 10, 20, 30…: renumbering the whole list keeps room between positions forever. Returns the
 * rows whose position changes, and where the row came from and went.
 */
export function reorder<T extends { id: string; position: number }>(
  rows: T[],
  id: string,
  to: number,
) {
  const order = [...rows];
  const from = order.findIndex((row) => row.id === id);
  const [moved] = order.splice(from, 1);
  order.splice(Math.min(to, order.length), 0, moved!);
  const changes = order
    .map((row, index) => ({ id: row.id, position: (index + 1) * 10, was: row.position }))
    .filter((row) => row.position !== row.was);
  return { order: order.map((row) => row.id), from, to: order.indexOf(moved!), changes };
}
