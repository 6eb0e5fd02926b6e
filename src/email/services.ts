import { Layer } from "effect"
import { ConfigurationSets } from "./ConfigurationSets.ts"
import { CursorPages } from "./cursorPage.ts"
import { EmailMessagesRepo } from "./EmailMessagesRepo.ts"
import { Emails } from "./Emails.ts"
import { EmailTemplates } from "./EmailTemplates.ts"
import { Identities } from "./Identities.ts"
import { MailLedger } from "./MailLedger.ts"
import { Partners } from "./Partners.ts"
import { PartnersRepo } from "./PartnersRepo.ts"
import { ProductionAccess } from "./ProductionAccess.ts"
import { SendingStats } from "./SendingStats.ts"
import { Suppression } from "./Suppression.ts"
import { SuppressionRepo } from "./SuppressionRepo.ts"

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
  CursorPages.Default,
  EmailMessagesRepo.Default
)

/** What the `mailer` actor's behaviour reads and writes through (SqlClient, AppConfig, EmailRelay and ActorClient from the node). */
export const MailerServices = Layer.mergeAll(MailLedger.Default, Identities.Default, EmailMessagesRepo.Default, SuppressionRepo.Default, PartnersRepo.Default)
