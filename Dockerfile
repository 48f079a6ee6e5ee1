# syntax=docker/dockerfile:1
# One image for both modes: `ironpool controller` and `ironpool poollet` (see deploy/).
# No image is built on the project's machines (they have no container engine): README, "Deploy".

ARG NODE_IMAGE=node:24-bookworm-slim

# Bundle src/ into dist/ironpool/ with the full toolchain (esbuild and the other dev dependencies):
# the same `npm run build` (scripts/build.ts) that `npm start`, `npm test` and the benches run.
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci
COPY scripts ./scripts
COPY src ./src
RUN npm run build

# The bundle holds every dependency it runs on, so the image carries no node_modules: bin/run.js,
# dist/ and package.json (which oclif reads for the command list and the version).
FROM ${NODE_IMAGE}
ENV NODE_ENV=production
WORKDIR /app
COPY package.json ./
COPY bin ./bin
COPY --from=build /src/dist ./dist
# Numeric, so that the kubelet can check runAsNonRoot; 1000 is the base image's `node` user, and the
# Deployments in deploy/ run as the same uid with a read-only root filesystem (nothing here is written).
USER 1000:1000
# By its shebang, which carries ironpool's Node flags (bin/run.js).
ENTRYPOINT ["/app/bin/run.js"]
