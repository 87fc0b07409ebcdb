// The worker's Work stream on gRPC's callback API: no thread per stream. A
// report is handled on the gRPC thread that read it: its worker's next task is
// leased and written from there at once, and the result goes to the
// coordinator's commit thread, which writes the acknowledgement after COMMIT.
#pragma once

#include <memory>

#include "grpcpp/grpcpp.h"
#include "proto/mtune.grpc.pb.h"
#include "server/coordinator.h"

namespace mtune::server {

// What ReportAck and Task writes need from a stream after its reactor may be
// gone: shared by the reactor, its sink and its pending acknowledgements.
struct WorkStreamState;

class WorkReactor final
    : public grpc::ServerBidiReactor<mtune::v1::WorkerMessage, mtune::v1::CoordinatorMessage> {
 public:
  // `denied`: the authorization's answer; a stream that is not OK ends with it
  // before reading anything.
  WorkReactor(Coordinator* coordinator, const grpc::Status& denied);

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  void HandleStart();
  void HandleReport();

  Coordinator* coordinator_;
  std::shared_ptr<WorkStreamState> state_;
  mtune::v1::WorkerMessage in_;
  bool started_ = false;  // the WorkStart was read (reads happen one at a time)
};

}  // namespace mtune::server
