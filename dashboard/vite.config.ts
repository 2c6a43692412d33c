import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The gateway serves the built files from dist/dashboard at /dashboard (src/http/routes/dashboard.ts).
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/dashboard/',
  // Preact's JSX through esbuild: no framework plugin needed.
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: process.env.DASHBOARD_OUT_DIR ?? fileURLToPath(new URL('../dist/dashboard', import.meta.url)),
    emptyOutDir: true,
    // Every asset a file of its own: the page's Content-Security-Policy allows no inline code or styles.
    assetsInlineLimit: 0,
    target: 'es2022',
    reportCompressedSize: false,
  },
  logLevel: 'warn',
});
