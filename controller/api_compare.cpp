// GET /api/campaigns/A/compare/B: two campaigns' reports matched configuration by configuration
// (common/compare.hpp). Io thread only, like every Controller handler; the reports are read and compared on the
// DbWorker.
#include "common/compare.hpp"
#include "controller/api_call.hpp"
#include "controller/db_worker.hpp"

namespace jetsweep::controller {

void Controller::api_compare(const ApiCall& call) {
  db_.post<Result<api::CampaignComparison>>(
      executor(),
      [a = call.parts[2], b = call.parts[4]](Store& s) -> Result<api::CampaignComparison> {
        JS_ASSIGN_OR_RETURN(int64_t id_a, s.resolve_campaign(a));
        JS_ASSIGN_OR_RETURN(int64_t id_b, s.resolve_campaign(b));
        JS_ASSIGN_OR_RETURN(api::CampaignReport report_a, s.campaign_report(id_a, ReportEpochs::kRows));
        JS_ASSIGN_OR_RETURN(api::CampaignReport report_b, s.campaign_report(id_b, ReportEpochs::kRows));
        // Pure and linear in the runs: done here rather than on the io thread.
        return api::compare_campaigns(report_a, report_b);
      },
      [call](Result<api::CampaignComparison> r) { call.reply(r); });
}

}  // namespace jetsweep::controller
