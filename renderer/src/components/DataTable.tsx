// Virtualised data table (TanStack Table + TanStack Virtual): sortable (click a header, shift
// for multi-sort), filterable (quick filter over all visible columns), column picker, multi-
// select with checkboxes (shift-click for a range). Only the visible rows are in the DOM, so it
// stays fast with thousands of rows.
import { useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import {
  flexRender, getCoreRowModel, getFilteredRowModel, getSortedRowModel, useReactTable,
  type ColumnDef, type SortingState, type VisibilityState, type Row,
} from '@tanstack/react-table';
import { useVirtualizer } from '@tanstack/react-virtual';

export interface DataTableProps<T> {
  data: T[];
  columns: ColumnDef<T, any>[];
  getRowId: (row: T) => string;
  /** Selected row ids (controlled). Omit for a table without checkboxes. */
  selected?: ReadonlySet<string>;
  onSelectedChange?: (ids: Set<string>) => void;
  onRowOpen?: (row: T) => void;
  height?: number | string;
  /** localStorage key for column visibility and sorting. */
  storageKey?: string;
  initialSorting?: SortingState;
  initialHidden?: string[];
  /** Columns hidden until the user shows them (for columns that appear later, e.g. one per config value). */
  hiddenUnlessChosen?: (columnId: string) => boolean;
  toolbar?: ReactNode;
  emptyText?: ReactNode;
  rowHeight?: number;
  testId?: string;
  filterPlaceholder?: string;
}

function load<T>(key: string | undefined, fallback: T): T {
  if (!key) return fallback;
  try { const v = localStorage.getItem(key); return v ? (JSON.parse(v) as T) : fallback; } catch { return fallback; }
}
function save(key: string | undefined, value: unknown): void {
  if (!key) return;
  try { localStorage.setItem(key, JSON.stringify(value)); } catch { /* storage unavailable */ }
}

/** Column meta understood by the table. */
export interface ColumnMeta { numeric?: boolean; filterText?: (value: unknown) => string }

/**
 * Global filter: every space-separated term must appear in some visible cell's text. Strings
 * match as they are; other values only through the column's meta.filterText (so that raw
 * numbers such as timestamps do not match by accident).
 */
function matchesFilter<T>(row: Row<T>, terms: string[]): boolean {
  if (terms.length === 0) return true;
  const text = row.getVisibleCells().map((c) => {
    const v = c.getValue();
    const meta = c.column.columnDef.meta as ColumnMeta | undefined;
    if (meta?.filterText) return meta.filterText(v);
    return typeof v === 'string' ? v : '';
  }).join(' \u0001 ').toLowerCase();
  return terms.every((t) => text.includes(t));
}

export function DataTable<T>(props: DataTableProps<T>) {
  const { data, columns, getRowId, selected, onSelectedChange, onRowOpen, storageKey, rowHeight = 32 } = props;
  const [sorting, setSorting] = useState<SortingState>(() => load(storageKey && `${storageKey}.sort`, props.initialSorting ?? []));
  const [visibility, setVisibility] = useState<VisibilityState>(() => load(storageKey && `${storageKey}.cols`,
    Object.fromEntries((props.initialHidden ?? []).map((id) => [id, false]))));
  const [filter, setFilter] = useState('');
  const [pickerOpen, setPickerOpen] = useState(false);
  const anchorRef = useRef<string | null>(null);
  const scrollRef = useRef<HTMLDivElement>(null);
  const pickerRef = useRef<HTMLDivElement>(null);

  useEffect(() => save(storageKey && `${storageKey}.sort`, sorting), [storageKey, sorting]);
  useEffect(() => save(storageKey && `${storageKey}.cols`, visibility), [storageKey, visibility]);
  useEffect(() => {
    if (!pickerOpen) return;
    const close = (ev: MouseEvent) => { if (!pickerRef.current?.contains(ev.target as Node)) setPickerOpen(false); };
    document.addEventListener('mousedown', close);
    return () => document.removeEventListener('mousedown', close);
  }, [pickerOpen]);

  const terms = useMemo(() => filter.toLowerCase().split(/\s+/).filter(Boolean), [filter]);
  // a column the user never toggled and that is hidden unless chosen stays hidden
  const { hiddenUnlessChosen } = props;
  const effectiveVisibility = useMemo<VisibilityState>(() => {
    if (!hiddenUnlessChosen) return visibility;
    const ids = columns.map((c) => (c as { id?: string; accessorKey?: string }).id ?? (c as { accessorKey?: string }).accessorKey).filter((id): id is string => !!id);
    return { ...Object.fromEntries(ids.filter((id) => !(id in visibility) && hiddenUnlessChosen(id)).map((id) => [id, false])), ...visibility };
  }, [columns, visibility, hiddenUnlessChosen]);
  const table = useReactTable({
    data,
    columns,
    getRowId: (row) => getRowId(row),
    state: { sorting, columnVisibility: effectiveVisibility, globalFilter: terms },
    onSortingChange: setSorting,
    onColumnVisibilityChange: setVisibility,
    globalFilterFn: (row, _columnId, value: string[]) => matchesFilter(row, value),
    getCoreRowModel: getCoreRowModel(),
    getSortedRowModel: getSortedRowModel(),
    getFilteredRowModel: getFilteredRowModel(),
    enableMultiSort: true,
    isMultiSortEvent: (e) => (e as MouseEvent).shiftKey,
  });
  const rows = table.getRowModel().rows;

  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => rowHeight,
    overscan: 12,
  });
  const items = virtualizer.getVirtualItems();
  const padTop = items.length > 0 ? items[0]!.start : 0;
  const padBottom = items.length > 0 ? virtualizer.getTotalSize() - items[items.length - 1]!.end : 0;

  const selectable = !!selected && !!onSelectedChange;
  const visibleIds = rows.map((r) => r.id);
  const allSelected = selectable && visibleIds.length > 0 && visibleIds.every((id) => selected!.has(id));

  const toggle = (id: string, shift: boolean) => {
    if (!selectable) return;
    const next = new Set(selected);
    if (shift && anchorRef.current && visibleIds.includes(anchorRef.current)) {
      const a = visibleIds.indexOf(anchorRef.current);
      const b = visibleIds.indexOf(id);
      const [lo, hi] = a < b ? [a, b] : [b, a];
      for (let i = lo; i <= hi; i++) next.add(visibleIds[i]!);
    } else if (next.has(id)) next.delete(id);
    else next.add(id);
    anchorRef.current = id;
    onSelectedChange!(next);
  };

  const leafColumns = table.getAllLeafColumns();
  const colCount = table.getVisibleLeafColumns().length + (selectable ? 1 : 0);

  return (
    <div className="dt" data-testid={props.testId}>
      <div className="dt-toolbar">
        <input
          type="search" placeholder={props.filterPlaceholder ?? 'Filter…'} value={filter}
          onChange={(e) => setFilter(e.target.value)} aria-label="Filter rows" style={{ width: 270 }}
        />
        {props.toolbar}
        <span className="grow" />
        <div className="rel" ref={pickerRef}>
          <button className="btn small" onClick={() => setPickerOpen((o) => !o)} aria-expanded={pickerOpen}>Columns ▾</button>
          {pickerOpen && (
            <div className="popover" style={{ right: 0, top: 30 }} role="dialog" aria-label="Column picker">
              {leafColumns.map((col) => (
                <label key={col.id}>
                  <input type="checkbox" checked={col.getIsVisible()} disabled={!col.getCanHide()} onChange={col.getToggleVisibilityHandler()} />
                  {typeof col.columnDef.header === 'string' ? col.columnDef.header : col.id}
                </label>
              ))}
            </div>
          )}
        </div>
      </div>
      <div className="dt-scroll" ref={scrollRef} style={{ height: props.height ?? 480 }}>
        {/* the columns' sizes are their widths (fixed layout; a long value ellipsises, its cell's tooltip has it): the table
            never grows past them, so the default columns fit 1280 px */}
        <table className="dt-table" role="grid" aria-rowcount={rows.length} style={{ width: table.getVisibleLeafColumns().reduce((a, c) => a + c.getSize(), selectable ? 36 : 0) }}>
          <thead>
            {table.getHeaderGroups().map((hg) => (
              <tr key={hg.id}>
                {selectable && (
                  <th className="check">
                    <input type="checkbox" aria-label="Select all" checked={allSelected}
                      onChange={() => onSelectedChange!(allSelected ? new Set([...selected!].filter((id) => !visibleIds.includes(id))) : new Set([...selected!, ...visibleIds]))} />
                  </th>
                )}
                {hg.headers.map((h) => {
                  const sorted = h.column.getIsSorted();
                  const meta = h.column.columnDef.meta as { numeric?: boolean; wrapHeader?: boolean; headerTitle?: string } | undefined;
                  return (
                    <th key={h.id} style={{ width: h.getSize() }} title={meta?.headerTitle}
                      className={`${h.column.getCanSort() ? 'sortable' : ''} ${meta?.numeric ? 'num' : ''} ${meta?.wrapHeader ? 'wrap' : ''}`}
                      onClick={h.column.getToggleSortingHandler()}
                      aria-sort={sorted === 'asc' ? 'ascending' : sorted === 'desc' ? 'descending' : 'none'}>
                      {flexRender(h.column.columnDef.header, h.getContext())}
                      {sorted === 'asc' ? ' ▲' : sorted === 'desc' ? ' ▼' : ''}
                    </th>
                  );
                })}
              </tr>
            ))}
          </thead>
          <tbody>
            {padTop > 0 && <tr aria-hidden="true"><td colSpan={colCount} style={{ height: padTop, padding: 0, border: 0 }} /></tr>}
            {items.map((vi) => {
              const row = rows[vi.index]!;
              const isSel = selectable && selected!.has(row.id);
              return (
                <tr key={row.id} data-row-id={row.id} className={isSel ? 'selected' : ''} style={{ height: rowHeight }}
                  onDoubleClick={() => onRowOpen?.(row.original)}>
                  {selectable && (
                    <td className="check">
                      <input type="checkbox" aria-label={`Select ${row.id}`} checked={isSel}
                        onClick={(e) => { e.stopPropagation(); toggle(row.id, e.shiftKey); }} onChange={() => {}} />
                    </td>
                  )}
                  {row.getVisibleCells().map((cell) => {
                    const meta = cell.column.columnDef.meta as { numeric?: boolean } | undefined;
                    return (
                      <td key={cell.id} className={meta?.numeric ? 'num' : ''} style={{ width: cell.column.getSize() }}>
                        {flexRender(cell.column.columnDef.cell, cell.getContext())}
                      </td>
                    );
                  })}
                </tr>
              );
            })}
            {padBottom > 0 && <tr aria-hidden="true"><td colSpan={colCount} style={{ height: padBottom, padding: 0, border: 0 }} /></tr>}
          </tbody>
        </table>
        {rows.length === 0 && <div className="empty-state">{data.length === 0 ? (props.emptyText ?? 'Nothing here yet.') : 'No rows match the filter.'}</div>}
      </div>
      <div className="dt-footer">
        <span data-testid="row-count">{rows.length === data.length ? `${data.length} rows` : `${rows.length} of ${data.length} rows`}</span>
        {selectable && selected!.size > 0 && <span>{selected!.size} selected</span>}
      </div>
    </div>
  );
}
