import { Effect } from "effect"
import { Wallet } from "../../wallet/Wallet.ts"
import { HeraldApi } from "../Api.ts"
import { CurrentPrincipal } from "../Authentication.ts"
import { apiGroup } from "../adapter/apiRoutes.ts"
import { presentWalletPage } from "./presentWallet.ts"

export const WalletHttpLive = apiGroup(HeraldApi, "wallet", (handlers) =>
  Effect.map(Wallet, (wallet) =>
    handlers.handle("read", ({ urlParams }) =>
      CurrentPrincipal.pipe(Effect.flatMap((principal) => wallet.read(principal, urlParams)), Effect.map(presentWalletPage)))))
