import { Module } from "webhook-tasks";
import { GitHubHandlers } from "./github-handlers";
import { OrderHandlers } from "./order-handlers";
import { SignedHandlers } from "./signed-handlers";
import { SlackHandlers } from "./slack-handlers";

@Module({
  name: "samples",
  handlers: [GitHubHandlers, SlackHandlers, OrderHandlers, SignedHandlers],
})
export class AppModule {}
