import { Effect } from "effect"
import { Wallet } from "../../wallet/Wallet.ts"
import { HeraldApi } from "../Api.ts"
import { CurrentPrincipal } from "../Authentication.ts"
import { apiGroup } from "../adapter/apiRoutes.ts"

export const WalletHttpLive = apiGroup(HeraldApi, "wallet", (handlers) =>
  Effect.map(Wallet, (wallet) =>
    handlers.handle("read", ({ urlParams }) => Effect.flatMap(CurrentPrincipal, (principal) => wallet.read(principal, urlParams)))))
