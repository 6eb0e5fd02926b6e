# Herald: one image for api and worker nodes (HERALD_ROLE picks the role).
FROM node:22-bookworm-slim

ENV NODE_ENV=production
WORKDIR /app

COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

COPY bin ./bin
COPY src ./src
COPY vendor ./vendor
COPY tsconfig.json ./
# The bundle is built now, as root: at run time /app is read-only to the node user.
RUN node bin/build.mjs

USER node
# V8 would otherwise let the heap grow toward a limit set by the host's memory, holding garbage
# it has no reason to collect (a million-recipient broadcast peaks near 1 GB uncapped, under
# 512 MB RSS capped at 400 MB with the same speed). Override with NODE_OPTIONS.
ENV NODE_OPTIONS=--max-old-space-size=400
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/health/ready').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"

ENTRYPOINT ["node", "bin/herald.js"]
CMD ["serve"]
