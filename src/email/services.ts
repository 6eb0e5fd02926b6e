import { Layer } from "effect"
import { ConfigurationSets } from "./ConfigurationSets.ts"
import { CursorPages } from "./cursorPage.ts"
import { Emails } from "./Emails.ts"
import { EmailTemplates } from "./EmailTemplates.ts"
import { Identities } from "./Identities.ts"
import { Partners } from "./Partners.ts"
import { ProductionAccess } from "./ProductionAccess.ts"
import { SendingStats } from "./SendingStats.ts"
import { Suppression } from "./Suppression.ts"

/** The partner e-mail API's services on an api node (SqlClient, AppConfig, ActorClient, ChangeFeed and EmailRelay from the node). */
export const PartnerEmailServices = Layer.mergeAll(
  Emails.Default,
  Identities.Default,
  Partners.Default,
  ConfigurationSets.Default,
  EmailTemplates.Default,
  Suppression.Default,
  ProductionAccess.Default,
  SendingStats.Default,
  CursorPages.Default
)
