// A preset's default name says its env ("spa frozenlake quick"); a run moved to another env with
// --set env.id gets a name that says so, and a name the user gave is kept.
import { describe, expect, it } from 'vitest';
import { resolveRunConfig } from '../../core/engine/config.js';
import '../../core/engine/presets.js';

describe('preset run names follow the env', () => {
  it('renames the default name, keeps a given one', () => {
    expect(resolveRunConfig({ preset: 'spa', size: 'quick' }).config!.name).toBe('spa frozenlake quick');
    expect(resolveRunConfig({ preset: 'spa', size: 'quick', set: { 'env.id': 'sokoban' } }).config!.name).toBe('spa sokoban quick');
    expect(resolveRunConfig({ preset: 'spa-drills', size: 'quick', set: { 'env.id': 'sokoban' } }).config!.name).toBe('spa-drills sokoban quick');
    expect(resolveRunConfig({ preset: 'spa', size: 'quick', name: 'mine', set: { 'env.id': 'sokoban' } }).config!.name).toBe('mine');
    expect(resolveRunConfig({ preset: 'spa', size: 'quick', set: { 'env.id': 'sokoban', name: 'set by hand' } }).config!.name).toBe('set by hand');
  });
});
