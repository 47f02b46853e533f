// Renderer entry: connect the API client (Electron bridge or WebSocket), apply the theme, mount.
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import './theme/theme.css';
import { App } from './App.js';
import { connect } from './api/connect.js';
import { applyTheme, initialTheme } from './theme/theme.js';
import { loadLegends } from './boards/legend-store.js';

applyTheme(initialTheme());
const client = connect();
loadLegends(client); // boards draw from the legends the envs serve
const root = document.getElementById('root');
if (!root) throw new Error('index.html must contain <div id="root">');
createRoot(root).render(
  <StrictMode>
    <App client={client} />
  </StrictMode>,
);
