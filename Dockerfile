# syntax=docker/dockerfile:1

# ---- build: compile TypeScript and the native addon, then keep only production dependencies
FROM node:20-bookworm-slim AS build
WORKDIR /app
# better-sqlite3 falls back to compiling its addon with node-gyp when no prebuilt binary matches.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
# npm ci runs the prepare script; it builds nothing here (no sources yet): `npm run build` below does.
COPY scripts ./scripts
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY dashboard ./dashboard
RUN npm run build \
 && npm prune --omit=dev

# ---- runtime: no compiler, no dev dependencies, not root
FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production HOST=0.0.0.0 DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# Created here so a fresh named volume inherits the node user's ownership.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 3000
# /health answers 503 when the event store cannot be reached, which marks the container unhealthy too.
HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:3000/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "dist/main.js"]
