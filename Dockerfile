# syntax=docker/dockerfile:1
# One image for both modes: `ironpool controller` and `ironpool poollet` (see deploy/).
# No image is built on the project's machines (they have no container engine): README, "Deploy".

ARG NODE_IMAGE=node:24-bookworm-slim

# Compile src/ to dist/ with the full toolchain (TypeScript and the other dev dependencies).
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

# Production dependencies only. Install scripts are skipped: the one production package that has
# one (protobufjs) only checks its optional CLI there, and skipping them keeps the install offline-safe.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force

FROM ${NODE_IMAGE}
ENV NODE_ENV=production
WORKDIR /app
COPY package.json ./
COPY bin ./bin
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /src/dist ./dist
# Numeric, so that the kubelet can check runAsNonRoot; 1000 is the base image's `node` user, and the
# Deployments in deploy/ run as the same uid with a read-only root filesystem (nothing here is written).
USER 1000:1000
ENTRYPOINT ["node", "/app/bin/run.js"]
