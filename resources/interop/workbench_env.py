"""RAGEN environments whose text state equals a SPA Workbench template's state text.

Shipped in an SPA Workbench export bundle (`spa-workbench export RUN --to spa-ragen`). RAGEN's own
Sokoban and FrozenLake render the bare symbol grid; SPA's world-model prompts need the grid plus
the coordinate line the self-play SFT rows were written with. These envs keep RAGEN's puzzle
generation, dynamics and rewards (they subclass RAGEN's envs) and only change `render()` in text
mode: the grid RAGEN draws is parsed back into entities and formatted with `state_format`, a
Python format string written by the exporter from the workbench template's `state` part, e.g.
"{grid}\\n{spa_coordinates}".

Variables (the same names and texts as the workbench's core/prompts/state-text.ts):
  grid, rows, cols, spa_coordinates, coordinate_listing, relations, json

Install into a RAGEN v1 checkout (the bundle's install_env.sh does this):
  cp workbench_env.py <RAGEN>/ragen/env/workbench_env.py
  and append to <RAGEN>/ragen/env/__init__.py:
    from .workbench_env import register as _workbench_register
    _workbench_register(REGISTERED_ENVS, REGISTERED_ENV_CONFIGS)
Then `env_type: workbench_sokoban` / `workbench_frozen_lake` work in custom_envs.

The functions above the RAGEN section need only the standard library (tests run them alone).
"""
import json
from dataclasses import dataclass

# Symbols of RAGEN's text render (ragen/env/sokoban/config.py, ragen/env/frozen_lake/config.py).
SOKOBAN_SYMBOLS = {'#': ('wall',), '_': (), 'O': ('target',), '√': ('box', 'target'), 'X': ('box',), 'P': ('player',), 'S': ('player', 'target')}
FROZEN_SYMBOLS = {'P': ('player',), '_': (), 'O': ('hole',), 'G': ('goal',), 'X': ('player', 'hole'), '√': ('player', 'goal')}

SOKOBAN_LABEL = {'player': 'Player (P)', 'box': 'box (X)', 'target': 'target (O)'}
FROZEN_LABEL = {'player': 'Player (P)', 'hole': 'hole (O)', 'goal': 'goal (G)'}
LISTING = {
    'sokoban': [('wall', 'Walls'), ('target', 'Targets'), ('box', 'Boxes'), ('player', 'Player')],
    'frozenlake': [('hole', 'Holes'), ('goal', 'Goal'), ('player', 'Player')],
}
SUPPORTED_VARIABLES = ('grid', 'rows', 'cols', 'spa_coordinates', 'coordinate_listing', 'relations', 'json')


def entities_from_grid(env_id, grid):
    """[(kind, row, col)] from a RAGEN symbol grid; raises ValueError naming the row and column of an unknown symbol."""
    symbols = SOKOBAN_SYMBOLS if env_id == 'sokoban' else FROZEN_SYMBOLS
    out = []
    for r, line in enumerate(grid.split('\n')):
        for c, ch in enumerate(line):
            if ch not in symbols:
                raise ValueError(f'{env_id} grid row {r} column {c}: unknown symbol {ch!r}; expected one of {"".join(symbols)}')
            for kind in symbols[ch]:
                out.append((kind, r, c))
    return out


def _by_kind(entities, kind):
    return sorted([(r, c) for k, r, c in entities if k == kind])


def spa_coordinates(env_id, entities):
    labels = SOKOBAN_LABEL if env_id == 'sokoban' else FROZEN_LABEL
    order = ['player', 'box', 'target'] if env_id == 'sokoban' else ['player', 'hole', 'goal']
    parts = [f'{labels[kind]} is at ({r},{c})' for kind in order for r, c in _by_kind(entities, kind)]
    return '; '.join(parts) + '.'


def coordinate_listing(env_id, entities):
    lines = []
    for kind, title in LISTING[env_id]:
        cells = _by_kind(entities, kind)
        lines.append(f'{title}: ' + (', '.join(f'({r}, {c})' for r, c in cells) if cells else 'none'))
    return '\n'.join(lines)


def _relation(dr, dc):
    if dr == 0 and dc == 0:
        return 'at the same position as the player'
    vertical = f'{abs(dr)} {"above" if dr < 0 else "below"}'
    horizontal = f'{abs(dc)} {"left" if dc < 0 else "right"} of'
    if dr == 0:
        return f'in the same row, {horizontal} the player'
    if dc == 0:
        return f'in the same column, {vertical} the player'
    return f'{vertical} and {horizontal} the player'


def relations(env_id, entities):
    labels = SOKOBAN_LABEL if env_id == 'sokoban' else FROZEN_LABEL
    kinds = ['box', 'target'] if env_id == 'sokoban' else ['hole', 'goal']
    players = _by_kind(entities, 'player')
    if not players:
        return ''
    pr, pc = players[0]
    lines = [f'Player (P) is at ({pr},{pc}).']
    for kind in kinds:
        for r, c in _by_kind(entities, kind):
            lines.append(f'{labels[kind]} at ({r},{c}) is {_relation(r - pr, c - pc)}.')
    return '\n'.join(lines)


def state_json(env_id, grid, entities):
    players = _by_kind(entities, 'player')
    pos = lambda kind: [[r, c] for r, c in _by_kind(entities, kind)]
    if env_id == 'sokoban':
        value = {'grid': grid.split('\n'), 'player': list(players[0]) if players else None, 'boxes': pos('box'), 'targets': pos('target')}
    else:
        value = {'grid': grid.split('\n'), 'player': list(players[0]) if players else None, 'holes': pos('hole'), 'goal': pos('goal')}
    return json.dumps(value, ensure_ascii=False, separators=(',', ':'))


def render_state(env_id, grid, state_format):
    """The workbench template's state text for a RAGEN symbol grid."""
    entities = entities_from_grid(env_id, grid)
    lines = grid.split('\n')
    values = {
        'grid': grid, 'rows': len(lines), 'cols': len(lines[0]) if lines else 0,
        'spa_coordinates': spa_coordinates(env_id, entities),
        'coordinate_listing': coordinate_listing(env_id, entities),
        'relations': relations(env_id, entities),
        'json': state_json(env_id, grid, entities),
    }
    return state_format.format(**values)


def set_success_rate(table, success_rate):
    """Rewrite gymnasium FrozenLake's transition table P[s][a] in place: a slippery move (three outcomes, listed by gymnasium as
    [a-1, a, a+1]) goes the intended way with success_rate and to each perpendicular side with (1 - success_rate) / 2."""
    p = float(success_rate)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f'env_config.success_rate: expected a probability in [0, 1], got {success_rate!r}')
    side = (1.0 - p) / 2.0
    for s, by_action in table.items():
        for a, outcomes in by_action.items():
            if len(outcomes) == 3:
                by_action[a] = [(q,) + tuple(o[1:]) for q, o in zip((side, p, side), outcomes)]
    return table


# ───────────── RAGEN section: needs a RAGEN v1 checkout (ragen, gym_sokoban) on the path ─────────────

def register(registered_envs, registered_env_configs):
    """Add workbench_sokoban and workbench_frozen_lake to RAGEN's registries (ragen/env/__init__.py)."""
    from ragen.env.sokoban.config import SokobanEnvConfig
    from ragen.env.sokoban.env import SokobanEnv
    from ragen.env.frozen_lake.config import FrozenLakeEnvConfig
    from ragen.env.frozen_lake.env import FrozenLakeEnv

    @dataclass
    class WorkbenchSokobanEnvConfig(SokobanEnvConfig):
        state_format: str = '{grid}\n{spa_coordinates}'

    @dataclass
    class WorkbenchFrozenLakeEnvConfig(FrozenLakeEnvConfig):
        state_format: str = '{grid}\n{spa_coordinates}'
        # Probability that a slippery move goes the intended way (the workbench run's successRate). RAGEN passes only
        # is_slippery to gymnasium (ragen/env/frozen_lake/env.py:21-26 @5eb79b8), where it is fixed at 1/3.
        success_rate: float = 1.0 / 3.0

    class WorkbenchSokobanEnv(SokobanEnv):
        def render(self, mode=None):
            out = super().render(mode)
            if (mode or self.render_mode) != 'text':
                return out
            return render_state('sokoban', out, self.config.state_format)

    class WorkbenchFrozenLakeEnv(FrozenLakeEnv):
        def __init__(self, config=None):
            # RAGEN's reset() calls self.__init__(self.config) to rebuild the map, so the table is rewritten on every reset.
            super().__init__(config)
            set_success_rate(self.P, getattr(self.config, 'success_rate', 1.0 / 3.0))

        def render(self, mode=None):
            out = self._parent_render(mode)
            if (mode or getattr(self, 'render_mode', 'text')) != 'text':
                return out
            return render_state('frozenlake', out, self.config.state_format)

        # RAGEN's FrozenLakeEnv.render(self) takes no mode (ragen/env/frozen_lake/env.py:47); Sokoban's does.
        def _parent_render(self, mode):
            return super().render() if mode is None else super().render(mode)

    registered_envs['workbench_sokoban'] = WorkbenchSokobanEnv
    registered_env_configs['workbench_sokoban'] = WorkbenchSokobanEnvConfig
    registered_envs['workbench_frozen_lake'] = WorkbenchFrozenLakeEnv
    registered_env_configs['workbench_frozen_lake'] = WorkbenchFrozenLakeEnvConfig


if __name__ == '__main__':
    # `python workbench_env.py ENV FORMAT < grids.json` prints the rendered states as JSON (used by the workbench's tests).
    import sys
    grids = json.load(sys.stdin)
    print(json.dumps([render_state(sys.argv[1], g, sys.argv[2]) for g in grids], ensure_ascii=False))
